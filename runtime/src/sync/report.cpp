// How the task-parking primitives report misuse that has no caller to throw to; and
// fj::task_scope's out-of-line paths (forkjoin/detail/coroutine_task.hpp; its protocol:
// docs/design/coroutines.md#tasks), which share that report's way out.
#include <cstdio>
#include <cstdlib>

#include <forkjoin/detail/sync_waiter.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/task.hpp>
#include <forkjoin/task_scope.hpp>

namespace fj::detail {

void report_destroyed_with_waiters(const char* primitive) noexcept {
    std::fprintf(stderr,
                 "forkjoin: %s destroyed while a task or thread waits for it "
                 "(docs/errors.md#task-parking-primitives)\n",
                 primitive);
    std::abort();
}

task_scope_core::~task_scope_core() {
    // Not joined: its children would count themselves out of freed memory and resume a parent
    // that is gone.
    if (!m_joined) {
        std::fprintf(stderr, "forkjoin: fj::task_scope destroyed after spawn() without co_await "
                             "join() (docs/errors.md#coroutines)\n");
        std::abort();
    }
}

void task_scope_core::spawn(task_handle<void> child) {
    if (!child)
        throw_invalid_argument("fj::task_scope::spawn: an empty task (moved from)");
    task_promise_base& p = child.promise();
    p.m_scope = this;
    p.m_start.handle = child;
    m_count.add_child();
    pool_core* pool = current_pool();
    try { // on this worker's deque, as join()'s second branch
        queue_resumption(pool != nullptr ? *pool : current_pool_or_default(), p.m_start);
    } catch (...) {
        m_count.remove_unstarted_child();
        child.destroy();
        throw; // nothing was spawned: the scope needs no join for it
    }
    m_joined = false; // the parent's field: the child never touches it
}

std::coroutine_handle<> task_scope_core::child_ended(std::exception_ptr error) noexcept {
    if (error && m_count.elect_first_failure())
        m_error = std::move(error);
    error = nullptr; // a dropped one is freed before the parent may go on
    // Not the last: the parent may be resumed and the scope gone; nothing here touches it.
    if (!m_count.child_leaves())
        return std::noop_coroutine();
    return m_parent;
}

void task_scope_core::joined() {
    m_count.rejoin();
    m_joined = true;
    if (m_count.take_failure())
        std::rethrow_exception(std::exchange(m_error, {}));
}

std::coroutine_handle<>
task_promise_base::final_awaiter::end_scope_child(task_scope_core* scope, std::exception_ptr error,
                                                  std::coroutine_handle<> self) noexcept {
    // The frame first: once the parent resumes, the scope may end; nothing touches the frame.
    self.destroy();
    return scope->child_ended(std::move(error));
}

} // namespace fj::detail
