// Sleep and wake-up (docs/design/sleep.md): how a worker with nothing to do leaves the active
// count and sleeps without missing work, and how whoever makes work visible wakes one. The
// sleeper's sequence is written once here (steps 1-7 of docs/design/sleep.md#steps); the worker
// loop picks its variant (spare, crowded, timed) by the timeout it passes. Every publication of
// work wakes through wake_for_work(), or through publish_work() (pool_core.hpp), whose slow path
// (notice_push) calls it.
#pragma once

#include "state/event_count.hpp"
#include "state/pool.hpp"

#include <chrono>
#include <cstdint>

namespace fj::detail {

// Whether p has work a worker could take: its injection queue, any deque, any resumable slot.
// Exact for the injection queue, a seq_cst look at the rest (docs/design/sleep.md#steps). With
// `looker`, only the work that worker's find_work() would take: a worker that leaves callers'
// deques alone (leaves_callers_alone(), state/pool.hpp) does not count them.
bool work_visible(const pool& p, const worker* looker = nullptr);

// Who made the work visible that a wake-up is for.
enum class pusher {
    // A worker of the pool, about to go on running: in a crowded pool it takes the work itself
    // when the awake workers already have every CPU (docs/design/crowded.md), so no one is woken.
    own_worker,
    // Anyone else (an outside submitter, a completion queuing a parked task's record).
    other,
};
// After the seq_cst store or RMW (or release store plus light barrier) that published the work:
// wakes one sleeper of p if one sleeps and no worker searches (one load when none sleeps;
// docs/design/sleep.md#searching).
void wake_for_work(pool& p, pusher who) noexcept;
// A worker that searched (holding a searching place: try_start_searching(), or a ticket it took)
// stops. The last searcher that found work wakes the next sleeper; one that found none goes on
// to go_idle(), whose re-check stands in for it. Returns whether it was the last searcher.
bool stop_searching(pool& p, bool found_work) noexcept;
// Wakes a sleeper to search unless somebody searches: what the last searcher does when it finds
// work.
void wake_next_searcher(pool& p) noexcept;
// Wakes every sleeper of p to re-check: the pool closed or stopped, or its last active thread
// left while it closes.
void wake_all(pool& p) noexcept;

// Steps 1-6 of going idle: the prewait, the sleeper's barrier, the stop and closed flag reads, the
// re-check of every queue, and leaving the active count. Outcomes:
enum class idle_check {
    work_in_sight, // work is visible: the wait is cancelled and the caller still counted active
    stopped,       // the pool had stopped: the wait is cancelled and the caller still counted
    stopped_it,    // the caller was the last one active of a closed, drained pool and stopped it:
                   // it is no longer counted, the wait is cancelled
    left,          // the caller is no longer counted active; its wait is prepared: it commits
                   // (sleep_until_woken)
};
// `looker`: the worker going idle, whose re-check looks only at the work it would take (null: a
// thread that leaves the pool, which looks at all of it).
idle_check go_idle(pool& p, const worker* looker) noexcept;

// Step 7, after go_idle() returned `left`: w sleeps (holding no place in the budget of running
// workers) until it takes a wake-up's ticket, or until `timeout` has passed when it is not zero;
// then takes its budget place back and counts itself active again. Returns whether it was woken
// (it then holds a searching place: stop_searching() gives it back) and when the sleep began.
struct slept {
    bool woken;
    std::chrono::steady_clock::time_point began;
};
slept sleep_until_woken(pool& p, worker& w, std::chrono::milliseconds timeout);

// A thread leaves the active count for good unless work is in sight: steps 1-6 without the
// sleep, so a wake-up aimed at it goes to a sleeper still waiting (the event count signals one
// that waits) and no visible work is left behind. Returns false, still counted, when it saw work.
bool leave_unless_work(pool& p) noexcept;

// The CPUs p's workers may run on, re-read from the calling worker's affinity mask when the last
// read is k_cpus_recheck old (docs/design/crowded.md).
std::uint32_t current_cpus(pool& p, std::chrono::steady_clock::time_point now) noexcept;

} // namespace fj::detail
