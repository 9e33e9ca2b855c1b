// Free functions on the *current* scheduler: the one whose task the calling thread is running
// (a worker's own pool, or the pool a helping thread is running a task for), else the
// process-wide default scheduler, created on first use and shut down cleanly at exit.
#pragma once

#include "detail/callable_check.hpp"
#include "detail/invoke.hpp"
#include "errors.hpp"
#include "scheduler.hpp"

#include <cstddef>
#include <future>
#include <stop_token>
#include <tuple>
#include <type_traits>
#include <utility>

namespace fj {

// The process-wide default scheduler (default options; FJ_WORKERS applies).
scheduler& default_scheduler();

inline scheduler& current_scheduler() {
    if (scheduler* s = detail::current_scheduler_or_null())
        return *s;
    return default_scheduler();
}

// What current_worker_index() returns on a thread that is not a worker of the current scheduler.
inline constexpr std::size_t not_a_worker = static_cast<std::size_t>(-1);

// The calling thread's index among the threads of the current scheduler (oneTBB's
// this_task_arena::current_thread_index()): 0 .. worker_count() - 1 for its own workers, the
// numbers after those, below scheduler::worker_index_limit(), for spare workers that the rescue
// of blocked pools starts and for threads outside the pool running their own call on it (a
// caller keeps its number for the call: docs/design/callers.md), and fj::not_a_worker on any
// other thread (outside every pool, or a worker of another pool helping while it waits). A task
// that waits may resume on another worker: read it again after a wait.
inline std::size_t current_worker_index() noexcept {
    const detail::worker* w = detail::current_worker();
    return (w != nullptr && w->m_pool == detail::current_pool()) ? w->m_index : not_a_worker;
}

namespace detail {
// The current scheduler's pool: straight from the thread's context inside a pool's task.
inline pool_core& current_pool_or_default() {
    if (pool_core* p = current_pool())
        return *p;
    return pool_of_handle(default_scheduler());
}
} // namespace detail

namespace detail {
// std::async's task: the callable and the arguments decay-copied (or moved) in when the task is
// created, and called once as rvalues, so move-only arguments work.
template <class F, class... Args>
class async_call {
public:
    template <class G, class... A>
    explicit async_call(G&& fn, A&&... args)
        : m_fn(std::forward<G>(fn)), m_args(std::forward<A>(args)...) {}

    std::invoke_result_t<F, Args...> operator()() {
        return std::apply(
            [this](Args&... args) -> std::invoke_result_t<F, Args...> {
                return detail::invoke(std::move(m_fn), std::move(args)...);
            },
            m_args);
    }

private:
    F m_fn;
    std::tuple<Args...> m_args;
};

// std::launch::async without the deferred bit: the call runs on a worker, as if on a new thread,
// never on a thread that get()s it (future_state.hpp's state_action::may_run_here).
template <class F, class... Args>
class async_call_on_worker : public async_call<F, Args...> {
public:
    using async_call<F, Args...>::async_call;
    static constexpr bool k_runs_on_a_worker = true;
};

template <class F, class... Args>
auto make_async_call(F&& fn, Args&&... args) {
    check_callable(fn);
    return async_call<std::decay_t<F>, std::decay_t<Args>...>(std::forward<F>(fn),
                                                              std::forward<Args>(args)...);
}
} // namespace detail

// std::async replacement: starts fn(args...) on the current scheduler (a fork when called from
// one of its tasks, a submit otherwise). As with std::async, fn and args are decay-copied (or
// moved) into the task and called as rvalues; the result type is
// std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>. The returned future does not
// block in its destructor.
template <class F>
requires(!std::is_same_v<std::remove_cvref_t<F>, scheduler>) auto async(F&& fn) {
    return detail::fork_in(detail::current_pool_or_default(), std::forward<F>(fn));
}

template <class F, class... Args>
requires(sizeof...(Args) > 0 && !std::is_same_v<std::remove_cvref_t<F>, scheduler> &&
         std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>) auto async(F&& fn,
                                                                                 Args&&... args) {
    return detail::fork_in(
        detail::current_pool_or_default(),
        detail::make_async_call(std::forward<F>(fn), std::forward<Args>(args)...));
}

// With std::async's launch policy first, so std::async calls port by renaming. Every fj task is
// queued when it is created, which is the policy's `async` bit. With the deferred bit too (the
// default policy), a get() outside every pool may run a task still queued on the calling thread
// (docs/design/callers.md#take-over); std::launch::async alone runs it on a worker, as if on a
// new thread. std::launch::deferred alone, a call run lazily inside get(), has no equivalent and
// is refused with std::invalid_argument before anything is queued.
template <class F, class... Args>
requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>
auto async(std::launch policy, F&& fn, Args&&... args) {
    if ((policy & std::launch::async) != std::launch::async)
        detail::throw_invalid_argument(
            "fj::async: std::launch::deferred alone is not supported (every fj task is queued "
            "when it is created); pass std::launch::async, or call the function where get() "
            "would have run it");
    if ((policy & std::launch::deferred) == std::launch::deferred)
        return detail::fork_in(
            detail::current_pool_or_default(),
            detail::make_async_call(std::forward<F>(fn), std::forward<Args>(args)...));
    detail::check_callable(fn);
    return detail::fork_in(detail::current_pool_or_default(),
                           detail::async_call_on_worker<std::decay_t<F>, std::decay_t<Args>...>(
                               std::forward<F>(fn), std::forward<Args>(args)...));
}

// The same on `sched`.
template <class F>
auto async(scheduler& sched, F&& fn) {
    return sched.fork(std::forward<F>(fn));
}

template <class F, class... Args>
requires(sizeof...(Args) > 0 &&
         std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>) auto async(scheduler& sched,
                                                                                 F&& fn,
                                                                                 Args&&... args) {
    return sched.fork(detail::make_async_call(std::forward<F>(fn), std::forward<Args>(args)...));
}

namespace detail {
// fj::async with a std::stop_token: the call is skipped, and get() throws fj::operation_cancelled,
// if a stop was requested before the task started.
template <class Call>
class stoppable_call {
public:
    stoppable_call(std::stop_token stop, Call call)
        : m_stop(std::move(stop)), m_call(std::move(call)) {}

    decltype(auto) operator()() {
        if (m_stop.stop_requested())
            throw_operation_cancelled("fj::async");
        return m_call();
    }

private:
    std::stop_token m_stop;
    Call m_call;
};

// jthread's convention: a callable whose first parameter takes a std::stop_token receives the
// token, so that it can poll it while it runs.
template <class F, class... Args>
auto make_stoppable_call(std::stop_token stop, F&& fn, Args&&... args) {
    if constexpr (std::is_invocable_v<std::decay_t<F>, std::stop_token, std::decay_t<Args>...>) {
        std::stop_token copy = stop;
        return stoppable_call(std::move(stop), make_async_call(std::forward<F>(fn), std::move(copy),
                                                               std::forward<Args>(args)...));
    } else {
        return stoppable_call(std::move(stop),
                              make_async_call(std::forward<F>(fn), std::forward<Args>(args)...));
    }
}

template <class F, class... Args>
concept stoppable_invocable = std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...> ||
    std::is_invocable_v<std::decay_t<F>, std::stop_token, std::decay_t<Args>...>;
} // namespace detail

// Stoppable: a stop request made before the task starts skips it, and get() then throws
// fj::operation_cancelled; fn(stop, args...) is called when fn takes a std::stop_token first (to
// poll it while running), else fn(args...). A running task is never interrupted.
template <class F, class... Args>
requires detail::stoppable_invocable<F, Args...>
auto async(std::stop_token stop, F&& fn, Args&&... args) {
    return detail::fork_in(detail::current_pool_or_default(),
                           detail::make_stoppable_call(std::move(stop), std::forward<F>(fn),
                                                       std::forward<Args>(args)...));
}

template <class F, class... Args>
requires detail::stoppable_invocable<F, Args...>
auto async(scheduler& sched, std::stop_token stop, F&& fn, Args&&... args) {
    return sched.fork(detail::make_stoppable_call(std::move(stop), std::forward<F>(fn),
                                                  std::forward<Args>(args)...));
}

template <class F>
auto fork(F&& fn) {
    return detail::fork_in(detail::current_pool_or_default(), std::forward<F>(fn));
}

template <class A, class B>
auto join(A&& a, B&& b) {
    return detail::join_in(detail::current_pool_or_default(), std::forward<A>(a),
                           std::forward<B>(b));
}

template <class Predicate>
void reschedule_until(Predicate&& done) {
    detail::reschedule_in(detail::current_pool_or_default(), std::forward<Predicate>(done));
}

} // namespace fj
