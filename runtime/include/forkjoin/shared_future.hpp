// fj::shared_future<T>: a task's result that any number of copies may wait for and read, on any
// threads (std::shared_future's shape; made by future::share() or from a future&&).
//
//   fj::shared_future<int> answer = fj::async([] { return 42; }).share();
//   auto a = fj::async([answer] { return answer.get() + 1; });   // copies, read concurrently
//   auto b = fj::async([answer] { return answer.get() * 2; });
//
// - get() waits, then returns the value as const T& (T& for a reference, nothing for void), or
//   rethrows the task's exception: the same stored exception on every call, from every copy.
//   The value stays until the last copy is gone, so get() may be called again.
// - Waiting is fj::future's: inside a task on a worker the wait parks the task (or helps); off
//   the pool the thread blocks. wait_for()/wait_until() return std::future_status.
// - No cancel(): cancel the future before share() if needed; every get() then throws
//   fj::task_cancelled.
// - then(f) runs f(const T&) (f(T&), f()) as a task once ready; the shared_future stays valid.
// - Dropping every copy before the task finishes neither blocks nor cancels: the task still runs,
//   and its result is freed when it finishes.
// - Operations on an empty shared_future (default-constructed or moved from) other than valid(),
//   copying and assignment throw std::future_error(no_state).
// - As for std::shared_future: any number of threads may call the const members of one object at
//   once; a thread that assigns to or destroys an object needs the others to be done with it.
#pragma once

#include "detail/shared_future_class.hpp"
#include "future.hpp"
