// co_await on forkjoin's futures, from any coroutine type:
//
//   fj::future<int> f = fj::async([] { return 6 * 7; });
//   int v = co_await std::move(f);                     // or co_await f; it consumes f, as get()
//   auto [a, b] = co_await fj::when_all(fj::async(f1), fj::async(f2)); // any fj::future
//   const int& s = co_await shared;                    // an fj::shared_future: any number of them
//
// A ready future does not suspend. A pending one suspends the coroutine without holding a thread
// or a fiber, and resumes it where the future completes, as then() runs its continuation: on the
// worker that finished the task (usually next), or, for a promise set outside every pool, on the
// default scheduler. The value, the task's exception and fj::task_cancelled come out of the
// co_await as they come out of get(); an empty future throws std::future_error(no_state).
// docs/coroutines.md; the design: docs/design/coroutines.md.
#pragma once

#include <forkjoin/detail/future_awaiter.hpp>
#include <forkjoin/future.hpp>
#include <forkjoin/shared_future.hpp>

namespace fj {

template <class T>
detail::future_awaiter<T> operator co_await(future<T>& f) noexcept {
    return detail::future_awaiter<T>(f);
}

// A temporary future lives in the coroutine's frame until the end of the full expression, across
// the suspension.
template <class T>
detail::future_awaiter<T> operator co_await(future<T>&& f) noexcept {
    return detail::future_awaiter<T>(f);
}

template <class T>
detail::shared_future_awaiter<T> operator co_await(const shared_future<T>& f) noexcept {
    return detail::shared_future_awaiter<T>(f);
}

} // namespace fj
