// Waiting for a completion: inline check first, out-of-line slow path. A wait ends when the
// completion is ready: done, or cancelled before it started.
// On a worker (of any scheduler) the slow path runs that worker's other tasks until ready; it
// never parks the OS thread while work exists. Off the pool it blocks on a waiter record (no
// spinning).
#pragma once

#include "completion.hpp"
#include "observe.hpp"

#include <chrono>

namespace fj::detail {

// The wait itself (blocking_wait.cpp); what wait() calls while nothing observes.
void wait_plain(completion& c);
// The same inside a wait_observation (observe.hpp): what wait() calls while observers exist.
void wait_observed(completion& c);
// Returns true if ready before the deadline.
bool wait_until_slow(completion& c, std::chrono::steady_clock::time_point deadline);

inline void wait(completion& c) {
    if (!c.is_ready()) {
        if (observed()) [[unlikely]]
            wait_observed(c);
        else
            wait_plain(c);
    }
}

inline bool wait_until(completion& c, std::chrono::steady_clock::time_point deadline) {
    return c.is_ready() || wait_until_slow(c, deadline);
}

} // namespace fj::detail
