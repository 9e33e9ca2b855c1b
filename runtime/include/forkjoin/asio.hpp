// Boost.Asio operations that wait for forkjoin computations, for any Asio completion token:
//
//   namespace asio = boost::asio;
//   asio::awaitable<void> session(asio::ip::tcp::socket socket, fj::scheduler& pool) {
//       ...
//       auto compute = [line] { return answer(line); }; // named: see docs/asio.md#gcc-12
//       std::string reply =
//           co_await fj::asio::async_run(pool, std::move(compute), asio::use_awaitable);
//       int v = co_await fj::asio::async_wait(std::move(some_fj_future), asio::use_awaitable);
//   }
//
// - async_run(pool, f, token) runs f() (or an fj::task) on pool as fj::async(pool, f) does;
//   async_run(f, token) on the default scheduler. The computation starts when the operation is
//   initiated: for use_awaitable, at the co_await.
// - async_wait(future, token) / async_wait(shared_future, token) complete when the future is
//   ready (a shared future's value is copied).
// - Completion: void(std::exception_ptr, T), or void(std::exception_ptr) for void, Asio's
//   convention for operations that may throw; with use_awaitable the co_await gives the value or
//   rethrows the computation's exception (fj::task_cancelled, std::future_error for an empty
//   future). T must be default-constructible, as for asio::co_spawn.
// - The handler runs on its associated executor (the awaiting coroutine's own, for
//   use_awaitable), queued there by post() from the worker that finished the computation: no
//   I/O thread waits or computes, and no worker runs the handler. That executor has outstanding
//   work until then, so io_context::run() does not run out of work while a computation is
//   pending.
// - Lifetimes: the pool outlives its computations (as for every fj task) and the executor's
//   execution context outlives the operation (as for every Asio operation).
//
// Needs Boost.Asio (header-only). Not part of <forkjoin/forkjoin.hpp>. With Boost 1.74,
// use_awaitable needs g++ 10 or later with -std=c++20 (Asio enables it only for GCC's C++20
// coroutines or clang's Coroutines TS); the other completion tokens work with every compiler.
// docs/asio.md; the design: docs/design/coroutines.md#boost-asio.
#pragma once

#include <type_traits>
#include <utility>

#include <boost/asio/async_result.hpp>

#include <forkjoin/detail/asio_completion.hpp>
#include <forkjoin/future.hpp>
#include <forkjoin/scheduler.hpp>
#include <forkjoin/shared_future.hpp>

namespace fj::asio {

template <class T, class CompletionToken>
auto async_wait(future<T> f, CompletionToken&& token) {
    namespace bridge = fj::detail::asio_bridge;
    bridge::check_result_type<T>();
    return boost::asio::async_initiate<CompletionToken, typename bridge::signature<T>::type>(
        bridge::initiate_wait{}, token, std::move(f));
}

template <class T, class CompletionToken>
auto async_wait(shared_future<T> f, CompletionToken&& token) {
    namespace bridge = fj::detail::asio_bridge;
    using value = std::remove_cvref_t<T>;
    bridge::check_result_type<value>();
    return boost::asio::async_initiate<CompletionToken, typename bridge::signature<value>::type>(
        bridge::initiate_wait{}, token, std::move(f));
}

template <class F, class CompletionToken>
auto async_run(scheduler& pool, F&& fn, CompletionToken&& token) {
    namespace bridge = fj::detail::asio_bridge;
    using T = bridge::run_result_t<F>;
    bridge::check_result_type<T>();
    return boost::asio::async_initiate<CompletionToken, typename bridge::signature<T>::type>(
        bridge::initiate_run{&pool}, token, std::forward<F>(fn));
}

template <class F, class CompletionToken>
requires(!std::is_same_v<std::remove_cvref_t<F>, scheduler>) auto async_run(
    F&& fn, CompletionToken&& token) {
    namespace bridge = fj::detail::asio_bridge;
    using T = bridge::run_result_t<F>;
    bridge::check_result_type<T>();
    return boost::asio::async_initiate<CompletionToken, typename bridge::signature<T>::type>(
        bridge::initiate_run{nullptr}, token, std::forward<F>(fn));
}

} // namespace fj::asio
