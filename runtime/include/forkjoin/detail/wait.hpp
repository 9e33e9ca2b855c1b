// Waiting for a completion: inline check first, out-of-line slow path. A wait ends when the
// completion is ready: done, or cancelled before it started.
// On a worker (of any scheduler) the slow path runs that worker's other tasks until ready; it
// never parks the OS thread while work exists. Off the pool it blocks on a waiter record (no
// spinning).
#pragma once

#include "completion.hpp"
#include "profile_frame.hpp"

#include <chrono>

namespace fj::detail {

void wait_slow(completion& c);
// The same without the profiler's pause (blocking_wait.cpp); what wait_slow() runs, and what
// wait() calls directly while no profiler region exists.
void wait_plain(completion& c);
// Returns true if ready before the deadline.
bool wait_until_slow(completion& c, std::chrono::steady_clock::time_point deadline);

inline void wait(completion& c) {
    if (!c.is_ready()) {
        if (profile_regions_exist()) [[unlikely]]
            wait_slow(c); // pauses the profiler's frame around the wait
        else
            wait_plain(c);
    }
}

inline bool wait_until(completion& c, std::chrono::steady_clock::time_point deadline) {
    return c.is_ready() || wait_until_slow(c, deadline);
}

} // namespace fj::detail
