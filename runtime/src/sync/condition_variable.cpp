// fj::condition_variable (forkjoin/condition_variable.hpp; docs/design/sync.md#steps, step 7).
// A queue of waiters under m_lock: a waiter is queued before it releases the user's lock, so a
// notify made after that (under the user's lock or not) finds it queued. Whoever takes a waiter
// out of the queue (a notify, its deadline, its stop request) is the one who releases it.
#include <forkjoin/condition_variable.hpp>
#include <forkjoin/sync_await.hpp>

namespace fj {

condition_variable::~condition_variable() {
    if (!m_waiters.empty())
        detail::report_destroyed_with_waiters("fj::condition_variable");
}

void condition_variable::enqueue(detail::sync_waiter& w) {
    std::lock_guard guard(m_lock);
    m_waiters.push_back(w);
}

void condition_variable::notify_one() noexcept {
    detail::sync_waiter* w = nullptr;
    {
        std::lock_guard guard(m_lock);
        if (m_waiters.empty())
            return;
        w = &m_waiters.pop_front();
        w->outcome = detail::wait_outcome::granted;
    }
    detail::release(*w);
}

void condition_variable::notify_all() noexcept {
    detail::waiter_queue all;
    {
        std::lock_guard guard(m_lock);
        all = m_waiters.take_all_marked(detail::wait_outcome::granted);
    }
    detail::release_all(all);
}

void condition_variable::wake_one_waiter(detail::sync_waiter& w) noexcept {
    {
        std::lock_guard guard(m_lock);
        if (w.outcome != detail::wait_outcome::queued)
            return; // notified or timed out already
        m_waiters.unlink(w);
        w.outcome = detail::wait_outcome::granted;
    }
    detail::release(w);
}

// Throws std::system_error, queuing nothing, if `lock` does not own its mutex (as std's wait).
bool detail::condition_awaiter::await_suspend(std::coroutine_handle<> h) {
    if (!m_lock.owns_lock())
        m_lock.unlock(); // throws operation_not_permitted
    m_handle = h;
    m_cv.enqueue(record); // before unlocking: a notify after our unlock finds us queued
    m_lock.unlock();
    if (suspend(h))
        return true;
    return m_relock.await_suspend(h); // notified meanwhile: take the mutex back (or wait for it)
}

// Notified, where the coroutine would resume: it goes on once it has the mutex, which may mean
// waiting for it (then the mutex's awaiter resumes it).
bool detail::condition_awaiter::relock(coroutine_waiter& self) noexcept {
    auto& a = static_cast<condition_awaiter&>(self);
    return !a.m_relock.await_suspend(a.m_handle);
}

void detail::condition_awaiter::await_resume() noexcept {
    fj::mutex* const m = m_lock.release(); // unowned since the wait began, owned again now
    m_lock = std::unique_lock<fj::mutex>(*m, std::adopt_lock);
}

void condition_variable::wait_queued_until(detail::sync_waiter& w,
                                           std::chrono::steady_clock::time_point deadline) {
    if (deadline == std::chrono::steady_clock::time_point::max()) {
        detail::wait_released(w, detail::park_reason::condition_variable);
        return;
    }
    detail::withdraw_with withdraw([this](detail::sync_waiter& waiter) noexcept {
        std::lock_guard guard(m_lock);
        if (waiter.outcome != detail::wait_outcome::queued)
            return false;
        m_waiters.unlink(waiter);
        waiter.outcome = detail::wait_outcome::timed_out;
        return true;
    });
    detail::wait_released_until(w, deadline, withdraw, detail::park_reason::condition_variable);
}

} // namespace fj
