// What forkjoin/asio.hpp's operations are made of (docs/design/coroutines.md#boost-asio):
//
// - outstanding_work: the handler's executor, holding outstanding work while the computation
//   runs, so that the io_context's run() does not return meanwhile (both kinds of Asio
//   executor: the standard ones by prefer(outstanding_work.tracked), the older Networking TS
//   ones by an executor_work_guard);
// - complete_when_ready: a coroutine that awaits the future (forkjoin/await.hpp: no thread
//   waits), then posts the handler with the result to that executor, so the handler never runs
//   on a worker, nor inside the initiating call;
// - initiate_wait / initiate_run: the initiations that async_initiate calls with the handler.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/execution/executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <forkjoin/async.hpp>
#include <forkjoin/await.hpp>
#include <forkjoin/future.hpp>
#include <forkjoin/scheduler.hpp>
#include <forkjoin/shared_future.hpp>
#include <forkjoin/task.hpp>

namespace fj::detail::asio_bridge {

// How the operation completes: Asio's convention for an operation that may throw (as
// asio::co_spawn's), which use_awaitable turns into the value or the rethrown exception.
template <class T>
struct signature {
    using type = void(std::exception_ptr, T);
};
template <>
struct signature<void> {
    using type = void(std::exception_ptr);
};

template <class T>
constexpr void check_result_type() {
    static_assert(std::is_void_v<T> || std::is_object_v<T>,
                  "fj::asio: the computation's result must be an object type or void (return a "
                  "pointer or std::reference_wrapper instead of a reference)");
    // The failed completion still passes a T, as asio::co_spawn does.
    static_assert(std::is_void_v<T> || std::is_default_constructible_v<T>,
                  "fj::asio: the computation's result must be default-constructible (wrap it in "
                  "std::optional): a completion with an exception passes T{} beside it");
}

template <class Executor, bool Standard = boost::asio::execution::is_executor<Executor>::value>
class outstanding_work;

template <class Executor>
class outstanding_work<Executor, true> {
public:
    explicit outstanding_work(const Executor& ex)
        : m_executor(boost::asio::prefer(ex, boost::asio::execution::outstanding_work.tracked)) {}

    const auto& executor() const noexcept { return m_executor; }

private:
    std::decay_t<decltype(boost::asio::prefer(std::declval<const Executor&>(),
                                              boost::asio::execution::outstanding_work.tracked))>
        m_executor;
};

template <class Executor>
class outstanding_work<Executor, false> {
public:
    explicit outstanding_work(const Executor& ex) : m_guard(ex) {}

    Executor executor() const noexcept { return m_guard.get_executor(); }

private:
    boost::asio::executor_work_guard<Executor> m_guard;
};

// A coroutine that starts at once and frees its frame at its end; nobody awaits it.
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        // Only post() can throw here (std::bad_alloc), on a worker, where no caller could be told.
        [[noreturn]] void unhandled_exception() noexcept { std::terminate(); }
    };
};

// Queues handler(args...) on the executor, never running it here (post: blocking.never).
template <class Executor, class Handler, class... Args>
void post_completion(const Executor& ex, Handler&& handler, Args&&... args) {
    boost::asio::post(ex, [handler = std::forward<Handler>(handler),
                           ... args = std::forward<Args>(args)]() mutable {
        std::move(handler)(std::move(args)...);
    });
}

// Future: an fj::future or an fj::shared_future, held in the frame until the end. Runs up to
// the co_await on the initiating thread; resumed (when the future was pending) by the worker
// that completed it. The frame holds the work until the handler is posted.
template <class Future, class Handler, class Work>
detached complete_when_ready(Future f, Handler handler, Work work) {
    using T = typename Future::value_type;
    std::exception_ptr error;
    if constexpr (std::is_void_v<T>) {
        try {
            co_await std::move(f);
        } catch (...) {
            error = std::current_exception();
        }
        post_completion(work.executor(), std::move(handler), error);
    } else {
        std::optional<T> value;
        try {
            value.emplace(co_await std::move(f));
        } catch (...) {
            error = std::current_exception();
        }
        if (error)
            post_completion(work.executor(), std::move(handler), error, T{});
        else
            post_completion(work.executor(), std::move(handler), error, std::move(*value));
    }
}

// The initiation of fj::asio::async_wait: the handler's associated executor (the awaiting
// coroutine's, for use_awaitable; the system executor for a handler that has none) is where
// the completion goes.
struct initiate_wait {
    template <class Handler, class Future>
    void operator()(Handler&& handler, Future f) const {
        using executor_type = boost::asio::associated_executor_t<std::decay_t<Handler>>;
        outstanding_work<executor_type> work(boost::asio::get_associated_executor(handler));
        complete_when_ready(std::move(f), std::decay_t<Handler>(std::forward<Handler>(handler)),
                            std::move(work));
    }
};

// The initiation of fj::asio::async_run: starts the computation as fj::async does (an fj::task
// too), then waits for its future.
struct initiate_run {
    scheduler* pool; // null: the default scheduler, fj::async(f)'s choice

    template <class Handler, class F>
    void operator()(Handler&& handler, F&& fn) const {
        if (pool != nullptr)
            initiate_wait{}(std::forward<Handler>(handler), fj::async(*pool, std::forward<F>(fn)));
        else
            initiate_wait{}(std::forward<Handler>(handler), fj::async(std::forward<F>(fn)));
    }
};

template <class F>
using run_result_t =
    typename decltype(fj::async(std::declval<scheduler&>(), std::declval<F>()))::value_type;

} // namespace fj::detail::asio_bridge
