// A snapshot of per-worker counters. Each counter is written only by its worker (relaxed), so a
// snapshot taken while the pool runs is approximate but every value is one the worker really had.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

namespace fj {

struct worker_stats {
    std::uint64_t tasks_run = 0;      // tasks this worker ran (popped, stolen or injected)
    std::uint64_t forks = 0;          // tasks pushed to this worker's deque by fork()/join()
    std::uint64_t steals = 0;         // tasks taken from another worker's deque
    std::uint64_t failed_steals = 0;  // steal attempts that found nothing or lost a race
    std::uint64_t injected_taken = 0; // tasks taken from the global injection queue
    std::uint64_t sleeps = 0;         // times the worker went to sleep
    std::uint64_t wakeups = 0;        // times it woke up

    worker_stats& operator+=(const worker_stats& o) noexcept;
};

struct scheduler_stats {
    std::vector<worker_stats> workers;
    worker_stats total() const noexcept;
};

// One line per worker plus a total, for examples and diagnostics.
std::ostream& operator<<(std::ostream& out, const scheduler_stats& stats);

} // namespace fj
