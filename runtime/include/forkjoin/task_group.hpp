// fj::task_group: a set of tasks started one by one and waited for together (oneTBB's
// task_group, a Cilk sync scope).
//
// - run(f) from any thread or task queues f() on a scheduler: the one given to the constructor,
//   else the scheduler current where run() is called (oneTBB's arena of the calling thread: in a
//   task of pool P or inside P.execute(), P; on a thread outside every pool, the default
//   scheduler). On one of that scheduler's workers f goes to the front of the worker's deque,
//   like fork(); elsewhere to its injection queue. No future, no result: f returns void (a
//   result is ignored).
// - wait() returns once every task run so far has finished. On a worker of any pool it first
//   runs the tasks at the front of that worker's deque (the group's own, when run() was called
//   there), then parks like future::get() while the worker runs other work of its pool; off
//   every pool it blocks. It rethrows the first exception a task threw; the group is then ready
//   for reuse. Call it from one thread at a time.
// - cancel(): tasks that have not started are skipped; running ones finish (they may poll
//   is_canceling()). A task's exception cancels the group too. wait() ends the cancellation.
// - A group made with a std::stop_token is cancelled by a stop request, for good: tasks not
//   started are skipped (run() after it queues nothing that runs), and wait() throws
//   fj::operation_cancelled once the tasks that had started have finished (a task's exception
//   outranks it). wait() returns normally only if no stop was requested before it returned.
// - A group destroyed after run() without a wait() cancels what has not started, waits for
//   the rest, and throws fj::missing_wait (unless an exception is already unwinding the stack).
// - run() never calls f() itself, however many tasks are queued (oneTBB's guarantee): a caller
//   may hold a lock that f takes, or rely on f running after the rest of its own loop. The
//   deque grows to hold them; memory is one pooled block per queued task.
#pragma once

#include "async.hpp"
#include "detail/callable_check.hpp"
#include "detail/group_task.hpp"
#include "errors.hpp"
#include "scheduler.hpp"

#include <cstddef>
#include <exception>
#include <stop_token>
#include <utility>

namespace fj {

class task_group {
public:
    // Unbound: each run() queues on the scheduler current where it is called.
    task_group() noexcept : task_group(nullptr, std::stop_token{}) {}
    explicit task_group(std::stop_token stop) noexcept : task_group(nullptr, std::move(stop)) {}
    // Bound: every run() queues on s, from wherever it is called.
    explicit task_group(scheduler& s) noexcept : task_group(&s, std::stop_token{}) {}
    task_group(scheduler& s, std::stop_token stop) noexcept : task_group(&s, std::move(stop)) {}
    ~task_group() noexcept(false);

    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    template <class F>
    void run(F&& fn) {
        detail::check_callable(fn);
        detail::pool_core& p =
            m_state.m_pool != nullptr ? *m_state.m_pool : detail::current_pool_or_default();
        using task_type = detail::group_task<std::decay_t<F>>;
        detail::worker* w = detail::own_worker(p);
        task_type* t = task_type::make(m_state, std::forward<F>(fn));
        add_one();
        try {
            if (w != nullptr)
                detail::push_local(p, *w, t); // like fork()
            else
                detail::inject(p, t);
        } catch (...) { // no room to grow the deque, closed, or a fork() child: nothing queued
            t->discard();
            detail::finish_one(m_state);
            throw;
        }
    }

    void wait();
    void cancel() noexcept { m_state.m_cancel.store(true, std::memory_order_relaxed); }
    bool is_canceling() const noexcept { return m_state.m_cancel.load(std::memory_order_relaxed); }

private:
    task_group(scheduler* s, std::stop_token stop) noexcept
        : m_state(s != nullptr ? &detail::pool_of_handle(*s) : nullptr), m_stop(std::move(stop)),
          m_on_stop(m_stop, stop_canceller{&m_state}), m_uncaught(std::uncaught_exceptions()) {}

    // Runs on the thread that requests the stop (at construction if it already was).
    struct stop_canceller {
        detail::group_state* group;
        void operator()() const noexcept { group->m_cancel.store(true, std::memory_order_relaxed); }
    };

    void mark_unwaited() noexcept {
        // Read first: a flag that is already set costs no write to the shared line.
        if (!m_state.m_unwaited.load(std::memory_order_relaxed))
            m_state.m_unwaited.store(true, std::memory_order_relaxed);
    }

    void add_one() noexcept {
        mark_unwaited();
        // relaxed: the task is published by its push (release), which orders this before it;
        // the count only has to include it before the task can end.
        m_state.m_word.fetch_add(detail::group_state::k_one, std::memory_order_relaxed);
    }

    detail::group_state m_state;
    std::stop_token m_stop; // no stop state for a group made without one
    // After m_state (the callback may run in the constructor) and before nothing that it uses.
    std::stop_callback<stop_canceller> m_on_stop;
    int m_uncaught; // exceptions in flight at construction: more at destruction means unwinding
};

} // namespace fj
