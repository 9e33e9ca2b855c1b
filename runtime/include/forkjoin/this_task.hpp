// fj::this_task: what a task does to itself. sleep_for / sleep_until park the calling task, not
// its worker: the worker runs other work meanwhile, and the task resumes (maybe on another
// worker of its pool) once the time has passed. Off the pool, and where a task may not park
// (parking off, a foreign pool's task, a caller of a pool), they are std::this_thread's.
// In a coroutine, with <forkjoin/sync_await.hpp>: co_await fj::this_task::sleep_for_async(d) /
// sleep_until_async(t) (docs/coroutines.md).
#pragma once

#include <chrono>

namespace fj::this_task {

// Returns at `deadline` or a little after: a resumed task waits for a free worker.
void sleep_until(std::chrono::steady_clock::time_point deadline);

template <class Clock, class Duration>
void sleep_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    // Another clock: the remaining time, on the steady clock (as std::this_thread's may do).
    sleep_until(std::chrono::steady_clock::now() +
                std::chrono::ceil<std::chrono::steady_clock::duration>(deadline - Clock::now()));
}

template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& duration) {
    if (duration <= duration.zero())
        return;
    sleep_until(std::chrono::steady_clock::now() +
                std::chrono::ceil<std::chrono::steady_clock::duration>(duration));
}

} // namespace fj::this_task
