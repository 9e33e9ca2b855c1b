// A snapshot of per-worker counters. Each counter is written only by its worker (relaxed), so a
// snapshot taken while the pool runs is approximate but every value is one the worker really had.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

namespace fj {

struct worker_stats {
    std::uint64_t tasks_run = 0;           // tasks this worker ran (popped, stolen or injected)
    std::uint64_t forks = 0;               // tasks pushed to this worker's deque by fork()/join()
    std::uint64_t steals = 0;              // tasks taken from another worker's deque
    std::uint64_t failed_steals = 0;       // steal attempts that found nothing or lost a race
    std::uint64_t failed_before_steal = 0; // of those, the ones in a look that then stole: what
                                           // finding a victim cost, apart from idle looks
    std::uint64_t injected_taken = 0;      // tasks taken from the global injection queue
    std::uint64_t sleeps = 0;              // times the worker went to sleep
    std::uint64_t wakeups = 0;             // times it woke up
    std::uint64_t parks = 0;               // waiting tasks this worker parked on a fiber
    std::uint64_t resumes = 0;             // parked tasks that continued on this worker
    std::uint64_t migrations = 0;          // of those, parked on another worker
    // Of the parks, waits on the task-parking primitives (docs/sync.md: mutexes, latches,
    // channels...) and sleeps.
    std::uint64_t sync_parks = 0;
    // State at the snapshot (for diagnosing a stall), not counters: not summed by total().
    std::uint64_t queued = 0; // tasks in this worker's deque
    bool asleep = false;      // on the event count (it went to sleep more often than it woke)
    bool spare = false;       // a spare's slot (the rescue of blocked pools)
    bool caller = false;      // a caller's slot: outside threads that run their own calls

    worker_stats& operator+=(const worker_stats& o) noexcept;
};

struct scheduler_stats {
    std::vector<worker_stats> workers;
    bool closed = false;            // shutdown() has begun
    bool injected_empty = true;     // the injection queue looked empty
    std::uint32_t active = 0;       // workers awake plus outside threads running one of its tasks
    std::uint64_t parked = 0;       // tasks parked on fibers and not yet queued to resume
    bool parking = false;           // waiting tasks park on fibers (else they help while waiting)
    std::uint64_t fiber_stacks = 0; // fiber stacks mapped so far (each stays pooled)
    std::uint64_t peak_fiber_stacks = 0; // most stacks out of the pool at once (loops + parked)
    // Spare threads (scheduler_options::max_spare_workers, docs/tutorial-async.md#blocking).
    std::uint64_t rescues = 0;           // spares started because every thread was blocked
    std::uint64_t blocking_handoffs = 0; // spares started by fj::blocking
    std::uint64_t spares_started = 0;    // rescues + blocking_handoffs
    std::uint64_t spares_retired =
        0; // spare threads that ended (idle, surplus, or the pool stopped)
    std::uint32_t spares_running = 0; // spare threads alive at the snapshot
    // The rescue's monitor (docs/design/rescue.md): its looks at the pool, and the kernel states
    // of threads it read for them (one /proc read each).
    std::uint64_t monitor_looks = 0;
    std::uint64_t monitor_state_reads = 0;
    worker_stats total() const noexcept;
};

// One line per worker (counters, then deque length and asleep/awake) plus a total and the
// scheduler's state: what a watchdog prints when a run stops making progress.
std::ostream& operator<<(std::ostream& out, const scheduler_stats& stats);

} // namespace fj
