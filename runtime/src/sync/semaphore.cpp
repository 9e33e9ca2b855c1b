// fj::counting_semaphore's core (forkjoin/semaphore.hpp); the protocol is
// detail/semaphore_protocol.hpp (docs/design/sync.md#steps, step 9).
#include <string>

#include <forkjoin/errors.hpp>
#include <forkjoin/semaphore.hpp>

namespace fj::detail {

semaphore_core::semaphore_core(std::ptrdiff_t desired, std::ptrdiff_t max)
    : m_protocol(desired), m_max(max) {
    if (desired < 0 || desired > max)
        throw_invalid_argument("fj::counting_semaphore: an initial count of " +
                               std::to_string(desired) + " is outside [0, " + std::to_string(max) +
                               "]");
}

semaphore_core::~semaphore_core() {
    if (m_protocol.has_waiters())
        report_destroyed_with_waiters("fj::counting_semaphore");
}

void semaphore_core::release(std::ptrdiff_t n) {
    std::ptrdiff_t count = 0;
    waiter_queue granted;
    if (!m_protocol.release(n, m_max, count, granted))
        throw_invalid_argument("fj::counting_semaphore::release(" + std::to_string(n) +
                               ") with a count of " + std::to_string(count) + " and a maximum of " +
                               std::to_string(m_max));
    release_all(granted);
}

void semaphore_core::acquire() {
    if (try_acquire())
        return;
    sync_waiter w;
    if (m_protocol.take_or_queue(w))
        return;
    wait_released(w, park_reason::semaphore);
}

bool semaphore_core::take_or_queue(void* core, std::uint64_t, sync_waiter& w) {
    auto& self = *static_cast<semaphore_core*>(core);
    return self.try_acquire() || self.m_protocol.take_or_queue(w);
}

bool semaphore_core::acquire_until(std::chrono::steady_clock::time_point deadline) {
    sync_waiter w;
    if (m_protocol.take_or_queue(w))
        return true;
    withdraw_with withdraw(
        [this](sync_waiter& waiter) noexcept { return m_protocol.withdraw(waiter); });
    wait_released_until(w, deadline, withdraw, park_reason::semaphore);
    return w.outcome == wait_outcome::granted;
}

} // namespace fj::detail
