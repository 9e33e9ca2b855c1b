// fj::task_group's waiting side and its errors (docs/design/task-group.md).
#include "waits/group_wait.hpp"

#include <forkjoin/detail/wait.hpp>
#include <forkjoin/task_group.hpp>

namespace fj {

namespace detail {

void record_group_error(group_state& g) noexcept {
    // acq_rel exchange: exactly one task writes m_error; the waiter reads it after the count
    // reaches zero, which this task's finish_one() (a release, later) orders after the write.
    if (!g.m_failed.exchange(true, std::memory_order_acq_rel))
        g.m_error = std::current_exception();
    g.m_cancel.store(true, std::memory_order_relaxed); // the rest are not started (oneTBB alike)
}

template void wake_group_waiter<std_atomics>(group_state& g) noexcept;

} // namespace detail

void task_group::wait() {
    // Every task run so far has ended after it (waits/group_wait.hpp); detail::wait runs the
    // group's tasks from our deque first, then parks.
    detail::wait_for_group_tasks(m_state, [](detail::completion& woken) { detail::wait(woken); });
    m_state.m_unwaited.store(false, std::memory_order_relaxed);
    m_state.m_cancel.store(false, std::memory_order_relaxed); // the group is reusable...
    // ...unless its token was stopped, which is for good. Read after the store above: a request
    // whose callback ran before that store is seen here and the flag is set again; one that comes
    // later sets it itself.
    const bool stopped = m_stop.stop_requested();
    if (stopped)
        m_state.m_cancel.store(true, std::memory_order_relaxed);
    if (m_state.m_failed.load(std::memory_order_acquire)) {
        std::exception_ptr error = std::exchange(m_state.m_error, nullptr);
        m_state.m_failed.store(false, std::memory_order_relaxed);
        std::rethrow_exception(error);
    }
    if (stopped)
        detail::throw_operation_cancelled("fj::task_group::wait");
}

task_group::~task_group() noexcept(false) {
    if (!m_state.m_unwaited.load(std::memory_order_relaxed))
        return;
    // run() without wait(): nothing may outlive the group (tasks hold a reference to it), so
    // skip what has not started and wait for the rest; their exceptions give way to this error.
    cancel();
    try {
        wait();
    } catch (...) {
    }
    if (std::uncaught_exceptions() > m_uncaught)
        return; // unwinding already: a second exception would terminate
    throw missing_wait("fj::task_group destroyed after run() without wait(): its tasks that had "
                       "not started were cancelled and the others waited for. Call wait() "
                       "before the group goes out of scope");
}

} // namespace fj
