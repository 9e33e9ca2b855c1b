// What the forkjoin side of the perf drivers shares: the pool options they compare, the counters
// they print, and fib in the two styles users write (competitors/forkjoin_fib.cpp,
// competitors/forkjoin_runner.hpp, reschedule_bench.cpp, park_bench.cpp).
#pragma once

#include "workloads.hpp"

#include <cstddef>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace fj_perf {

// A pool of `workers` that parks waiting tasks on fibers or helps while waiting. FJ_PARKING, if
// set, still overrides the option (the drivers check pool.stats().parking where it matters).
inline fj::scheduler_options pool_options(int workers, bool park) {
    fj::scheduler_options options;
    options.workers = static_cast<std::size_t>(workers);
    options.park_waiting_tasks = park;
    return options;
}

// The counters a driver prints after a competitor's rounds.
inline std::string pool_counters(const fj::scheduler& pool) {
    auto const s = pool.stats().total();
    return "tasks_run=" + std::to_string(s.tasks_run) + " forks=" + std::to_string(s.forks) +
           " steals=" + std::to_string(s.steals) + " sleeps=" + std::to_string(s.sleeps);
}

// The seed's style: fork a child, compute the other half, reschedule_until the child is ready.
// Below `cutoff` (0: none) the serial function.
inline long fib_seed(fj::scheduler& pool, int n, int cutoff = 0) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fib_serial(n);
    auto f = pool.fork([&pool, n, cutoff] { return fib_seed(pool, n - 1, cutoff); });
    long b = fib_seed(pool, n - 2, cutoff);
    pool.reschedule_until([&] { return f.is_ready(); });
    return f.get() + b;
}

// The structured, allocation-free style. join(a, b) runs a itself and offers b to thieves, so
// fib(n - 1) goes second: the rule above, as every competitor forks it
// (docs/performance.md#join-order: offering the smaller branch cost about 8% of the 2-worker
// speed-up).
inline long fib_join(fj::scheduler& pool, int n, int cutoff = 0) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fib_serial(n);
    auto [smaller, larger] = pool.join([&] { return fib_join(pool, n - 2, cutoff); },
                                       [&] { return fib_join(pool, n - 1, cutoff); });
    return smaller + larger;
}

} // namespace fj_perf
