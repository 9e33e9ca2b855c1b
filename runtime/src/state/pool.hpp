// A pool's state: the fields every mechanism of runtime/src shares. fj::scheduler is a handle
// that owns one; the inline fork/join paths see only its public part (detail/pool_core.hpp). The
// mechanisms (sleep/, parking/, loop/, rescue/, ...) are functions over it; lifecycle/ builds and
// ends it, and is the one place that knows every mechanism (docs/design/index.md#the-map).
//
// Invariant (termination, docs/design/shutdown.md): m_active counts the workers that are not
// asleep plus the helping threads inside run_one_outside() and the callers inside their calls
// (callers/); m_parked counts parked tasks whose
// records no active thread holds yet. A thread takes a task only while counted, and after the
// close only counted threads add work (an outside submit is ordered before the close, and then
// its item is in the injection queue, or after it, and then it is refused). So when the last
// counted thread finds the queue closed, every queue empty and nothing parked, no task can ever
// appear again: it sets m_stop. Every update of m_active and m_parked is seq_cst, in one order
// with the queues' re-checks (sleep/sleep.cpp).
#pragma once

#include "platform/cpu_quota.hpp"
#include "platform/process_generation.hpp"
#include "state/caller_slots.hpp"
#include "state/event_count.hpp"
#include "state/injection_queue.hpp"
#include "state/spare_hooks.hpp"
#include "state/worker_set.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include <forkjoin/detail/current.hpp>
#include <forkjoin/detail/pool_core.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/options.hpp>
#include <forkjoin/stats.hpp>

namespace fj::detail {

struct parking_lot; // parking/: the worker loop on fibers, park and resume
struct parking_lot_deleter {
    void operator()(parking_lot* lot) const noexcept;
};
struct trace_session; // observe/: trace mode's per-worker buffers
struct trace_session_deleter {
    void operator()(trace_session* session) const noexcept;
};
class rescuer; // rescue/: spare workers while tasks block
struct rescuer_deleter {
    void operator()(rescuer* r) const noexcept;
};
class cpu_budget;      // budget/: the process's budget of running workers
struct thread_group;   // lifecycle/: the worker threads
struct profile_region; // <forkjoin/detail/profile_frame.hpp>

struct pool final : pool_core {
    pool(fj::scheduler& handle, const scheduler_options& options, std::uint64_t id);
    ~pool();

    bool is_closed() const noexcept { return m_injected.is_closed(); }

    scheduler_options m_options;      // as given, with the defaults resolved
    worker_set m_workers;             // workers, then spares' and callers' slots as they are made
    caller_slots m_callers;           // outside threads running their own calls (callers/)
    injection_queue<task> m_injected; // also holds the closed flag
    event_count m_sleep{m_sleepers};
    // The steal hint (state/steal_hint.hpp): the slot of a worker that pushed while others
    // searched or slept, or k_no_hint. relaxed, every access: a hint; the steal synchronizes.
    alignas(128) std::atomic<std::uint32_t> m_steal_hint{k_no_hint};
    static constexpr std::uint32_t k_no_hint = ~std::uint32_t{0};
    alignas(128) std::atomic<std::uint32_t> m_active{0}; // workers/helpers not asleep
    std::atomic<bool> m_stop{false};                     // set once: all work done after close
    std::atomic<std::uint64_t> m_outside_rng{0x9e3779b97f4a7c15ull};
    std::uint64_t m_generation = 0; // the process fork() generation it was created in (#fork)
    std::unique_ptr<thread_group> m_threads;
    std::unique_ptr<parking_lot, parking_lot_deleter> m_parking; // null when parking is off
    // Spare workers while tasks block (docs/design/rescue.md); null when max_spare_workers is 0.
    // The loop and the sleep protocol reach it through m_spare_hooks (the same object).
    std::unique_ptr<rescuer, rescuer_deleter> m_rescue;
    spare_hooks* m_spare_hooks = nullptr;
    // Observers (observe.hpp): trace mode's session, null unless tracing; the region every task
    // submitted to the pool is a root of, null unless it profiles its whole run.
    std::unique_ptr<trace_session, trace_session_deleter> m_trace;
    std::shared_ptr<profile_region> m_whole_run_profile;
    // The CPUs the pool's workers may run on (docs/design/crowded.md): the affinity mask's count
    // lowered to the cgroup quota read at start. A worker going idle re-reads the mask every
    // k_cpus_recheck (m_cpus_read_at, steady_clock ticks). relaxed, both: hints; a stale count
    // costs a wake-up or some parallelism until the next re-read, never a task.
    alignas(128) std::atomic<std::uint32_t> m_cpus{1};
    std::atomic<std::int64_t> m_cpus_read_at{0};
    cpu_limit m_cgroup_limit;
    // Tasks parked and not yet queued for resumption: pending work the pool must not stop under
    // (the termination invariant above). seq_cst: read by the last worker to go idle in the same
    // single order as m_active.
    alignas(128) std::atomic<std::size_t> m_parked{0};
    // Threads outside the pool inside make_resumable() or inject_handing_over(): shutdown waits
    // for them to leave.
    std::atomic<std::uint32_t> m_wakers{0};
    // Whether the workers take places in the process's budget of running workers
    // (cpu_budget.hpp): share_cpu_budget, for a pool no larger than the budget (one sized beyond
    // the CPUs asks for more threads than CPUs on purpose: docs/design/crowded.md).
    bool m_shares_cpu_budget = false;
    cpu_budget* m_cpu_budget = nullptr; // the budget it joined (a fork() child makes a new one)
    std::mutex m_shutdown_mutex;
    bool m_joined = false; // guarded by m_shutdown_mutex
};

inline pool& pool_of(pool_core& p) noexcept {
    return static_cast<pool&>(p);
}
inline const pool& pool_of(const pool_core& p) noexcept {
    return static_cast<const pool&>(p);
}

// The slot the calling thread serves, if its pool has the rescue of blocked workers and runs in
// this process (not a pool whose threads stayed in the parent of a fork()); else null. What
// fj::blocking and the runtime's own short waits declare to the rescue.
inline worker* current_worker_with_rescue() noexcept {
    worker* w = current_worker();
    if (w == nullptr)
        return nullptr;
    const pool& p = pool_of(*w->m_pool);
    return p.m_spare_hooks != nullptr && p.m_generation == process_generation() ? w : nullptr;
}

// The threads that may run the pool's tasks now, for the crowding rules (sleep/crowding.hpp): its
// workers and the callers inside their calls, which run its tasks beside them (spares stand in
// for blocked workers and are not counted).
inline std::size_t threads_running_tasks(const pool& p) noexcept {
    return p.m_worker_count + p.m_callers.held();
}

// How many threads the pool runs tasks on at once, for the crowding rules
// (docs/design/crowded.md): its CPUs, and never more than its size. A pool's size is its
// concurrency, as a oneTBB arena's is: a caller inside its call (docs/design/callers.md) takes
// one of the places, so a call from outside runs on the caller and at most size - 1 workers.
// Without callers the size bound changes nothing: at most size workers are ever awake.
inline std::size_t run_capacity(const pool& p, std::size_t cpus) noexcept {
    return cpus < p.m_worker_count ? cpus : p.m_worker_count;
}

// A pool of one worker runs a call from outside on its caller alone, as asked
// (docs/design/callers.md): its worker neither steals from a caller's deque nor counts that deque
// as work when it goes to sleep, unless its last sleep ended by the crowded backstop
// (worker::m_backstop_expired, written only by the worker: the caller may be blocked in the kernel
// on a task it forked). A caller's push wakes nobody in such a pool (sleep/crowding.hpp: the
// caller holds its one place), so the caller's deque is the caller's to drain, and the backstop's
// timed sleep is what takes it when the caller cannot. Spares, which stand in for a blocked
// worker, take from callers too.
inline bool leaves_callers_alone(const pool& p, const worker& w) noexcept {
    return p.m_worker_count == 1 && w.m_role == slot_role::worker && !w.m_backstop_expired;
}

// A pool made before a process fork() has no workers in the child: its use there is refused
// before anything is queued or run.
inline void refuse_in_forked_child(const pool& p) {
    if (p.m_generation != process_generation()) [[unlikely]]
        throw_logic_error(
            "fj::scheduler: used in the child of a fork(), but it was created before the fork and "
            "its worker threads exist only in the parent. Create a new scheduler in the child "
            "(fj::default_scheduler() and fj::async do this by themselves)");
}

// Spare workers (rescue/) serve slots past the pool's worker count (so do callers: callers/).
inline bool is_spare(const worker& w) noexcept {
    return w.m_role == slot_role::spare;
}

} // namespace fj::detail
