// The frame every parallel loop, reduction and range algorithm runs in: its loop_failure wired to
// the caller's std::stop_token, the work run inline on a worker or as one task from outside, and
// the outcome reported once every started chunk has finished (docs/design/loops.md).
#pragma once

#include "loop_failure.hpp"

#include <stop_token>

#include <forkjoin/scheduler.hpp>

namespace fj::detail {

// Runs `work` (returning R) on sched unless `empty`, or unless `stop` was requested before it
// could start; either way the result is then `none`. Afterwards rethrows the lowest failure
// recorded in `failure`, or throws fj::operation_cancelled naming `who` if `stop` was requested
// meanwhile. An empty call submits nothing, so it cannot fail on a closed scheduler.
template <class R, class Work>
R run_tracked(const char* who, fj::scheduler& sched, const std::stop_token& stop,
              loop_failure& failure, bool empty, R none, Work& work) {
    const auto run_all = [&]() -> R {
        // Registered for the whole run: a request runs cancel() on the requesting thread (at once
        // if it came before), and the destructor waits out a cancel() in progress, so the check
        // below sees every request made before it.
        std::stop_callback on_stop(stop, [&failure]() noexcept { failure.cancel(); });
        if (empty || failure.limit() == 0)
            return none;
        return sched.execute(work); // from outside: the calling thread runs it with the pool
    };
    R result = run_all();
    failure.rethrow_if_failed(who);
    return result;
}

} // namespace fj::detail
