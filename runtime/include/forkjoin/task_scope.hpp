// fj::task_scope: any number of children of an fj::task, joined together
// (docs/coroutines.md#scopes; the design: docs/design/coroutines.md#tasks). Not in the umbrella
// header.
#pragma once

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <exception>

#include <forkjoin/detail/scope_count.hpp>
#include <forkjoin/task.hpp>

namespace fj {
namespace detail {

// --- The scope of any number of tasks (docs/design/coroutines.md#tasks)
// ---------------------------

// m_count (scope_count.hpp): the children not yet ended, and the parent while it is not joining.
// Whoever brings it to zero resumes the parent: the last child (symmetric transfer), or the join
// itself.
class task_scope_core {
public:
    task_scope_core() noexcept = default;
    task_scope_core(const task_scope_core&) = delete;
    task_scope_core& operator=(const task_scope_core&) = delete;
    ~task_scope_core(); // std::abort()s unless joined since the last spawn()
    void spawn(task_handle<void> child);

    class join_awaiter {
    public:
        explicit join_awaiter(task_scope_core& scope) noexcept : m_scope(scope) {}
        bool await_ready() const noexcept { return m_scope.m_count.all_ended(); }
        template <class Promise>
        requires std::derived_from<Promise, awaits_tasks>
        bool await_suspend(std::coroutine_handle<Promise> parent) noexcept {
            m_scope.m_parent = parent; // published to the last child by parent_leaves()
            return m_scope.m_count.parent_leaves();
        }
        void await_resume() { m_scope.joined(); } // rethrows the first exception

    private:
        task_scope_core& m_scope;
    };

    // A child's end, its frame freed: keeps the first exception, counts the child out.
    std::coroutine_handle<> child_ended(std::exception_ptr error) noexcept;
    void joined();

private:
    scope_count m_count;
    std::exception_ptr m_error;       // the first failed child's, written by it
    std::coroutine_handle<> m_parent; // written by the join before its decrement
    bool m_joined = true;             // the parent's: false from a spawn() to the next join
};

} // namespace detail

// Any number of children of a task: scope.spawn(child) queues each (as join's b), then
// co_await scope.join() waits for all; the first exception is rethrown, the others dropped. It
// must be joined after its last spawn() before it is destroyed (std::abort() otherwise).
// docs/coroutines.md#scopes.
class task_scope {
public:
    // Throws fj::scheduler_closed (the child destroyed, unstarted), std::invalid_argument.
    void spawn(task<void>&& child) { m_core.spawn(detail::task_access::release(child)); }
    [[nodiscard]] detail::task_scope_core::join_awaiter join() noexcept {
        return detail::task_scope_core::join_awaiter(m_core);
    }

private:
    detail::task_scope_core m_core;
};

} // namespace fj
