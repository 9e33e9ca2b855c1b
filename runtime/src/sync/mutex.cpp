// fj::mutex's slow paths (forkjoin/mutex.hpp); the protocol is detail/mutex_protocol.hpp
// (docs/design/sync.md#steps, step 6).
#include <forkjoin/mutex.hpp>

namespace fj {

mutex::~mutex() {
    if (m_protocol.has_waiters())
        detail::report_destroyed_with_waiters("fj::mutex");
}

void mutex::lock_slow() {
    detail::sync_waiter w;
    if (m_protocol.take_or_queue(w))
        return;
    detail::wait_released(
        w, detail::park_reason::mutex); // handed over: ours, with the last owner's writes visible
}

bool mutex::lock_slow_until(std::chrono::steady_clock::time_point deadline) {
    detail::sync_waiter w;
    if (m_protocol.take_or_queue(w))
        return true;
    detail::withdraw_with withdraw(
        [this](detail::sync_waiter& waiter) noexcept { return m_protocol.withdraw(waiter); });
    detail::wait_released_until(w, deadline, withdraw, detail::park_reason::mutex);
    return w.outcome == detail::wait_outcome::granted;
}

void mutex::unlock_slow() {
    if (detail::sync_waiter* next = m_protocol.hand_over())
        detail::release(*next); // publishes our critical section to the next owner
}

} // namespace fj
