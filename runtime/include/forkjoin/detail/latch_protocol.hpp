// fj::latch's protocol (docs/design/sync.md#steps, step 8): the count and the queue of waiters,
// without the wait itself (the latch parks or blocks; the model test spins).
//
// The count is an atomic; the waiters are a queue under the lock. A waiter re-reads the count
// under the lock before queuing, and the count-down that reaches zero takes the lock after its
// decrement to take the queue: either the waiter's re-read comes after that decrement (it sees
// zero and does not queue) or its queuing comes before the lock is taken (it is released).
//
// Atomics and QueueLock: std_atomics and std::mutex in the runtime; the model test passes
// Relacy's (atomics.hpp).
#pragma once

#include "atomics.hpp"
#include "sync_waiter.hpp"

#include <cstddef>
#include <mutex>

namespace fj::detail {

template <class Atomics = std_atomics, class QueueLock = std::mutex>
class latch_protocol {
public:
    using waiter = basic_sync_waiter<Atomics>;
    using queue = basic_waiter_queue<waiter>;

    explicit latch_protocol(std::ptrdiff_t expected) noexcept : m_count(expected) {}

    // Counts n down. False, changing nothing, if n is negative or above the count (`count` then
    // holds the count). The count-down that reaches zero moves every waiter into `to_release`,
    // marked granted: release them after this returns.
    bool count_down(std::ptrdiff_t n, std::ptrdiff_t& count, queue& to_release) noexcept {
        count = m_count.load(std::memory_order_relaxed);
        do {
            if (n < 0 || n > count)
                return false;
            // acq_rel: release publishes what this thread did before counting down; acquire
            // makes the one that reaches zero carry everybody's (the decrements form one release
            // sequence) to the waiters it releases.
        } while (!m_count.compare_exchange_weak(count, count - n, std::memory_order_acq_rel,
                                                std::memory_order_relaxed));
        if (count != n || n == 0)
            return true;
        std::lock_guard guard(m_lock);
        to_release = m_waiters.take_all_marked(wait_outcome::granted);
        return true;
    }

    // acquire: pairs with the count-downs' release (their writes are visible after true).
    bool try_wait() const noexcept { return m_count.load(std::memory_order_acquire) == 0; }

    // True if the count is zero; else queues w (the caller waits for its release).
    bool ready_or_queue(waiter& w) {
        std::lock_guard guard(m_lock);
        if (try_wait())
            return true;
        m_waiters.push_back(w);
        return false;
    }

    // For the destructor's check only (no lock: a waiter racing destruction is the bug reported).
    bool has_waiters() const noexcept { return !m_waiters.empty(); }

private:
    typename Atomics::template atomic<std::ptrdiff_t> m_count;
    QueueLock m_lock; // guards m_waiters
    queue m_waiters;
};

} // namespace fj::detail
