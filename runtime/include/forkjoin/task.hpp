// fj::task<T>: a coroutine that runs on a pool and forks and joins other tasks without a fiber
// and without blocking.
//
//   fj::task<long> fib(int n) {
//       if (n < 2)
//           co_return n;
//       auto [a, b] = co_await fj::join(fib(n - 1), fib(n - 2)); // b may run on another worker
//       co_return a + b;
//   }
//   long v = fj::async(fib(30)).get();   // or co_await fj::async(...) from any coroutine
//
// - A task is lazy: it starts when awaited, or when fj::async / fj::async(pool, ...) queues it.
// - co_await child (inside a task) runs the child now, on this thread, and gives its value or
//   rethrows its exception.
// - co_await fj::join(a, b) offers b to idle workers (as fj::join does) and runs a here; the
//   awaiting task is resumed by whichever branch ends last, on that branch's thread. The result
//   is a std::pair (std::monostate for a void task); a's exception is rethrown first.
// - co_await fj::resume_on(pool) continues on a worker of `pool`; co_await fj::yield() lets the
//   pool's queued work run first.
// - A suspended task holds no thread and no fiber: only its frame, taken from the worker's block
//   cache (up to 512 bytes; larger frames come from the heap).
// docs/coroutines.md; the design: docs/design/coroutines.md#tasks.
#pragma once

#include <concepts>
#include <coroutine>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/detail/coroutine_task.hpp>
#include <forkjoin/future.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj {

template <class T = void>
class [[nodiscard]] task {
public:
    using promise_type = detail::task_promise<T>;
    using value_type = T;

    task(task&& other) noexcept : m_handle(std::exchange(other.m_handle, {})) {}
    task& operator=(task&& other) noexcept {
        if (this != &other) {
            if (m_handle)
                m_handle.destroy();
            m_handle = std::exchange(other.m_handle, {});
        }
        return *this;
    }
    task(const task&) = delete;
    task& operator=(const task&) = delete;
    ~task() {
        if (m_handle)
            m_handle.destroy(); // never started, or its result was not taken
    }

    // Runs the task now on the awaiting task's thread; its value, or its exception. Only a task
    // (or the root fj::async made) awaits a task: another coroutine awaits fj::async(task).
    detail::task_awaiter<T> operator co_await() && noexcept {
        return detail::task_awaiter<T>(std::exchange(m_handle, {}));
    }

private:
    friend class detail::task_promise<T>;
    friend struct detail::task_access;
    explicit task(detail::task_handle<T> h) noexcept : m_handle(h) {}

    detail::task_handle<T> m_handle;
};

// Two tasks, the second offered to idle workers: see above.
template <class A, class B>
detail::task_join_awaiter<A, B> join(task<A>&& a, task<B>&& b) {
    return detail::task_join_awaiter<A, B>(detail::task_access::release(a),
                                           detail::task_access::release(b));
}

// Queues the task on the current scheduler (or `sched`) and returns its future; the task runs on
// that pool's workers. From a task of the same pool, the task goes to this worker's deque, as a
// fork. Throws fj::scheduler_closed from outside a pool that is shutting down (the task is
// destroyed, unstarted).
template <class T>
future<T> async(task<T>&& t) {
    return detail::start_task(detail::current_pool_or_default(), std::move(t));
}

template <class T>
future<T> async(scheduler& sched, task<T>&& t) {
    return detail::start_task(detail::pool_of_handle(sched), std::move(t));
}

// co_await fj::resume_on(pool): the awaiting coroutine continues on a worker of `pool` (at once if
// it already runs on one). Throws fj::scheduler_closed at the co_await if `pool` is shutting down
// and the coroutine is not one of its tasks.
inline auto resume_on(scheduler& sched) noexcept {
    struct awaiter {
        detail::pool_core* target;
        detail::resume_task resumption;
        bool await_ready() const noexcept { return detail::own_worker(*target) != nullptr; }
        void await_suspend(std::coroutine_handle<> h) {
            resumption.handle = h;
            // Another pool's thread hands the coroutine over: it may finish, and the program
            // destroy `target`, before inject returns.
            detail::inject_handing_over(*target, &resumption);
        }
        void await_resume() const noexcept {}
    };
    return awaiter{&detail::pool_of_handle(sched), {}};
}

// co_await fj::yield(): the awaiting coroutine goes to the back of its pool's queue, behind the
// work already queued there, and continues when a worker takes it.
inline auto yield() noexcept {
    struct awaiter {
        detail::resume_task resumption;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) {
            resumption.handle = h;
            detail::inject(detail::current_pool_or_default(), &resumption);
        }
        void await_resume() const noexcept {}
    };
    return awaiter{};
}

namespace detail {
template <class T>
fj::task<T> task_promise<T>::get_return_object() noexcept {
    return fj::task<T>(task_handle<T>::from_promise(*this));
}
inline fj::task<void> task_promise<void>::get_return_object() noexcept {
    return fj::task<void>(task_handle<void>::from_promise(*this));
}
} // namespace detail

} // namespace fj
