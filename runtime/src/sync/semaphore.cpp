// fj::counting_semaphore's core (forkjoin/semaphore.hpp; docs/design/sync.md#steps, step 9).
// The count is an atomic that try_acquire() decrements while positive, lock-free. Increments
// (release) and queuing (a slow acquire) happen under m_lock, and release() gives its tokens to
// queued waiters before it adds any to the count: so while a waiter is queued the count stays 0,
// and a slow acquirer's re-check under the lock sees every token released before it queued.
#include <string>

#include <forkjoin/errors.hpp>
#include <forkjoin/semaphore.hpp>

namespace fj::detail {

semaphore_core::semaphore_core(std::ptrdiff_t desired, std::ptrdiff_t max)
    : m_count(desired), m_max(max) {
    if (desired < 0 || desired > max)
        throw_invalid_argument("fj::counting_semaphore: an initial count of " +
                               std::to_string(desired) + " is outside [0, " + std::to_string(max) +
                               "]");
}

semaphore_core::~semaphore_core() {
    if (!m_waiters.empty())
        report_destroyed_with_waiters("fj::counting_semaphore");
}

void semaphore_core::release(std::ptrdiff_t n) {
    waiter_queue granted;
    {
        std::lock_guard guard(m_lock);
        const std::ptrdiff_t count = m_count.load(std::memory_order_relaxed);
        if (n < 0 || n > m_max - count)
            throw_invalid_argument("fj::counting_semaphore::release(" + std::to_string(n) +
                                   ") with a count of " + std::to_string(count) +
                                   " and a maximum of " + std::to_string(m_max));
        for (; n > 0 && !m_waiters.empty(); --n) {
            sync_waiter& w = m_waiters.pop_front();
            w.outcome = wait_outcome::granted;
            granted.push_back(w);
        }
        if (n > 0)
            m_count.fetch_add(n, std::memory_order_release); // pairs with try_acquire()'s acquire
    }
    release_all(granted); // a handed token's acquire: the completion protocol
}

void semaphore_core::acquire() {
    if (try_acquire())
        return;
    sync_waiter w;
    {
        std::lock_guard guard(m_lock);
        if (try_acquire())
            return;
        m_waiters.push_back(w);
    }
    wait_released(w, park_reason::semaphore);
}

bool semaphore_core::acquire_until(std::chrono::steady_clock::time_point deadline) {
    sync_waiter w;
    {
        std::lock_guard guard(m_lock);
        if (try_acquire())
            return true;
        m_waiters.push_back(w);
    }
    withdraw_with withdraw([this](sync_waiter& waiter) noexcept {
        std::lock_guard guard(m_lock);
        if (waiter.outcome != wait_outcome::queued)
            return false; // a token was handed to it
        m_waiters.unlink(waiter);
        waiter.outcome = wait_outcome::timed_out;
        return true;
    });
    wait_released_until(w, deadline, withdraw, park_reason::semaphore);
    return w.outcome == wait_outcome::granted;
}

} // namespace fj::detail
