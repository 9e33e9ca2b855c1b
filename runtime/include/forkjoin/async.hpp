// Free functions on the *current* scheduler: the one whose task the calling thread is running
// (a worker's own pool, or the pool a helping thread is running a task for), else the
// process-wide default scheduler, created on first use and shut down cleanly at exit.
#pragma once

#include "scheduler.hpp"

#include <utility>

namespace fj {

// The process-wide default scheduler (default options; FJ_WORKERS applies).
scheduler& default_scheduler();

inline scheduler& current_scheduler() {
    if (scheduler* s = detail::current_scheduler_or_null())
        return *s;
    return default_scheduler();
}

namespace detail {
// The current scheduler's pool: straight from the thread's context inside a pool's task.
inline pool_core& current_pool_or_default() {
    if (pool_core* p = current_pool())
        return *p;
    return pool_of_handle(default_scheduler());
}
} // namespace detail

// std::async replacement: starts fn on the current scheduler (a fork when called from one of its
// tasks, a submit otherwise). The returned future does not block in its destructor.
template <class F>
auto async(F&& fn) {
    return detail::fork_in(detail::current_pool_or_default(), std::forward<F>(fn));
}

template <class F>
auto async(scheduler& sched, F&& fn) {
    return sched.fork(std::forward<F>(fn));
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
