// Waiting for a completion: inline check first, out-of-line slow path. A wait ends when the
// completion is ready: done, or cancelled before it started.
// On a worker (of any scheduler) the slow path runs that worker's other tasks until ready; it
// never parks the OS thread while work exists. Off the pool it blocks on a waiter record (no
// spinning).
#pragma once

#include "completion.hpp"

#include <chrono>

namespace fj::detail {

void wait_slow(completion& c);
// Returns true if ready before the deadline.
bool wait_until_slow(completion& c, std::chrono::steady_clock::time_point deadline);

inline void wait(completion& c) {
    if (!c.is_ready())
        wait_slow(c);
}

inline bool wait_until(completion& c, std::chrono::steady_clock::time_point deadline) {
    return c.is_ready() || wait_until_slow(c, deadline);
}

} // namespace fj::detail
