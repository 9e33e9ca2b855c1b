// fj::mutex's slow paths (forkjoin/mutex.hpp); the protocol is detail/mutex_protocol.hpp
// (docs/design/sync.md#steps, step 6).
#include <forkjoin/detail/cpu_relax.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/sync_await.hpp>

namespace fj {

namespace {
// How many times a locker that finds the mutex held tries again before it queues and parks. A
// short critical section ends within a few hundred nanoseconds, while parking and resuming cost
// microseconds: a brief spin takes the mutex as soon as it is free.
constexpr int k_spins_before_queuing = 100;
// How many times a waiter may be woken and lose the mutex to a newcomer before it asks for the
// hand-over mode, which lasts until it has the mutex (no waiter waits for ever).
constexpr int k_losses_before_hand_over = 3;
} // namespace

mutex::~mutex() {
    if (m_protocol.has_waiters())
        detail::report_destroyed_with_waiters("fj::mutex");
}

bool mutex::spin_for_it() noexcept {
    for (int i = 0; i < k_spins_before_queuing; ++i) {
        detail::cpu_relax();
        if (m_protocol.try_take())
            return true;
    }
    return false;
}

void mutex::lock_slow() {
    for (int lost = 0;; ++lost) {
        if (spin_for_it())
            return;
        detail::sync_waiter w;
        if (m_protocol.take_or_queue(w, lost > 0, lost >= k_losses_before_hand_over))
            return;
        detail::wait_released(w, detail::park_reason::mutex);
        if (w.outcome == detail::wait_outcome::granted)
            return; // handed over: ours, with the last owner's writes visible
        // Woken: the mutex was freed for us to compete for; try again, first in the queue. From
        // now on an unlock may wake another waiter.
        m_protocol.end_wake();
    }
}

bool mutex::lock_slow_until(std::chrono::steady_clock::time_point deadline) {
    for (int lost = 0;; ++lost) {
        if (spin_for_it())
            return true;
        if (lost > 0 && std::chrono::steady_clock::now() >= deadline)
            return false;
        detail::sync_waiter w;
        if (m_protocol.take_or_queue(w, lost > 0, lost >= k_losses_before_hand_over))
            return true;
        detail::withdraw_with withdraw(
            [this](detail::sync_waiter& waiter) noexcept { return m_protocol.withdraw(waiter); });
        detail::wait_released_until(w, deadline, withdraw, detail::park_reason::mutex);
        if (w.outcome == detail::wait_outcome::granted)
            return true;
        if (w.outcome == detail::wait_outcome::timed_out)
            return m_protocol.try_take(); // one last try, as a timed lock of std's may
        m_protocol.end_wake(); // woken: as in lock_slow(). A later give-up follows a failed
                               // take, so the mutex is held then, and its unlock wakes the next
    }
}

// The coroutine's form of lock_slow(): the same loop, with the wait replaced by a suspension.
// First from await_suspend(), then from each resumption of a woken waiter (retry()), on the
// worker that runs it.
bool mutex::lock_or_suspend(detail::mutex_lock_awaiter& a) {
    for (;;) {
        if (spin_for_it())
            return true;
        if (m_protocol.take_or_queue(a.record, a.m_lost > 0, a.m_lost >= k_losses_before_hand_over))
            return true;
        if (a.register_for_release())
            return false;
        // Released before the registration: granted, or woken to compete.
        if (a.record.outcome == detail::wait_outcome::granted)
            return true;
        m_protocol.end_wake();
        ++a.m_lost;
        a.rearm();
    }
}

bool detail::mutex_lock_awaiter::await_suspend(std::coroutine_handle<> h) {
    prepare(h);
    return !m_mutex.lock_or_suspend(*this);
}

bool detail::mutex_lock_awaiter::retry(coroutine_waiter& self) noexcept {
    auto& a = static_cast<mutex_lock_awaiter&>(self);
    if (a.record.outcome == wait_outcome::granted)
        return true; // handed over: ours, with the last owner's writes visible
    // Woken: compete again, first in the queue (as lock_slow()).
    a.m_mutex.m_protocol.end_wake();
    ++a.m_lost;
    a.rearm();
    return a.m_mutex.lock_or_suspend(a);
}

void mutex::unlock_slow() {
    // A waiter granted the mutex (hand-over) or woken to compete for it; its release publishes
    // our critical section.
    if (detail::sync_waiter* next = m_protocol.release_one())
        detail::release(*next);
}

} // namespace fj
