// fj::shared_mutex's slow paths (forkjoin/shared_mutex.hpp); the protocol is
// detail/shared_mutex_protocol.hpp (docs/design/sync.md#steps, step 15).
#include <forkjoin/detail/cpu_relax.hpp>
#include <forkjoin/shared_mutex.hpp>

namespace fj {

namespace {
// How many times a locker that finds the lock taken tries again before it queues and parks, as
// fj::mutex's: a short critical section ends well before a park and a resumption would.
constexpr int k_spins_before_queuing = 100;
} // namespace

shared_mutex::~shared_mutex() {
    if (m_protocol.has_waiters())
        detail::report_destroyed_with_waiters("fj::shared_mutex");
}

bool shared_mutex::spin_for_it(bool shared) noexcept {
    for (int i = 0; i < k_spins_before_queuing; ++i) {
        detail::cpu_relax();
        if (shared ? m_protocol.try_lock_shared() : m_protocol.try_lock())
            return true;
    }
    return false;
}

bool shared_mutex::lock_or_queue(void* self, std::uint64_t shared, detail::sync_waiter& w) {
    auto& m = *static_cast<shared_mutex*>(self);
    if (shared != 0)
        return m.spin_for_it(true) || m.m_protocol.lock_shared_or_queue(w);
    return m.spin_for_it(false) || m.m_protocol.lock_or_queue(w);
}

void shared_mutex::lock_slow(bool shared) {
    detail::sync_waiter w;
    if (lock_or_queue(this, shared ? 1 : 0, w))
        return;
    // Released only with the lock granted: ours, with the last owner's writes visible.
    detail::wait_released(w, detail::park_reason::shared_mutex);
}

bool shared_mutex::lock_slow_until(bool shared, std::chrono::steady_clock::time_point deadline) {
    detail::sync_waiter w;
    if (lock_or_queue(this, shared ? 1 : 0, w))
        return true;
    detail::withdraw_with withdraw([this](detail::sync_waiter& waiter) noexcept {
        // A writer leaving the front may let the readers behind it in: release them once the
        // queue lock is dropped (withdraw() has returned).
        detail::waiter_queue admitted;
        const bool withdrawn = m_protocol.withdraw(waiter, admitted);
        detail::release_all(admitted);
        return withdrawn;
    });
    detail::wait_released_until(w, deadline, withdraw, detail::park_reason::shared_mutex);
    if (w.outcome == detail::wait_outcome::granted)
        return true;
    // Timed out: one last try, as a timed lock of std's may.
    return shared ? m_protocol.try_lock_shared() : m_protocol.try_lock();
}

void shared_mutex::unlock_slow() {
    // The writer or the readers granted the lock; their release publishes our critical section.
    detail::release_all(m_protocol.hand_over());
}

void shared_mutex::unlock_shared_slow() {
    detail::release_all(m_protocol.admit_if_free());
}

} // namespace fj
