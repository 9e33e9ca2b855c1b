// fj::counting_semaphore's protocol (docs/design/sync.md#steps, step 9): the count and the queue
// of waiters, without the wait itself (the semaphore parks or blocks; the model test spins).
//
// The count is an atomic that try_acquire() decrements while positive, lock-free. Increments
// (release) and queuing (a slow acquire) happen under the lock, and release() gives its tokens to
// queued waiters before it adds any to the count: so while a waiter is queued the count stays 0,
// nobody barges past it, and a slow acquirer's re-check under the lock sees every token released
// before it queued.
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
class semaphore_protocol {
public:
    using waiter = basic_sync_waiter<Atomics>;
    using queue = basic_waiter_queue<waiter>;

    explicit semaphore_protocol(std::ptrdiff_t desired) noexcept : m_count(desired) {}

    // acquire: pairs with release()'s release increment.
    bool try_acquire() noexcept {
        std::ptrdiff_t count = m_count.load(std::memory_order_relaxed);
        while (count > 0)
            if (m_count.compare_exchange_weak(count, count - 1, std::memory_order_acquire,
                                              std::memory_order_relaxed))
                return true;
        return false;
    }

    // True if it took a token; else queues w (the caller waits for a token handed to it).
    bool take_or_queue(waiter& w) {
        std::lock_guard guard(m_lock);
        if (try_acquire())
            return true;
        m_waiters.push_back(w);
        return false;
    }

    // Releases n tokens: to the oldest waiters first (moved into `to_release`, marked granted:
    // release them after this returns), the rest to the count. False, changing nothing, if n is
    // negative or the count would pass `max` (`count` then holds the count).
    bool release(std::ptrdiff_t n, std::ptrdiff_t max, std::ptrdiff_t& count,
                 queue& to_release) noexcept {
        std::lock_guard guard(m_lock);
        count = m_count.load(std::memory_order_relaxed);
        if (n < 0 || n > max - count)
            return false;
        for (; n > 0 && !m_waiters.empty(); --n) {
            waiter& w = m_waiters.pop_front();
            w.outcome = wait_outcome::granted;
            to_release.push_back(w); // a handed token's acquire: the completion protocol
        }
        if (n > 0)
            m_count.fetch_add(n, std::memory_order_release); // pairs with try_acquire()
        return true;
    }

    // A timed-out waiter: true if it was still queued (taken out, marked timed out); false if a
    // token was handed to it first.
    bool withdraw(waiter& w) noexcept {
        std::lock_guard guard(m_lock);
        if (w.outcome != wait_outcome::queued)
            return false;
        m_waiters.unlink(w);
        w.outcome = wait_outcome::timed_out;
        return true;
    }

    // For the destructor's check only (no lock: a waiter racing destruction is the bug reported).
    bool has_waiters() const noexcept { return !m_waiters.empty(); }

private:
    typename Atomics::template atomic<std::ptrdiff_t> m_count; // 0 while anyone waits
    QueueLock m_lock; // guards m_waiters; increments of m_count are made under it
    queue m_waiters;
};

} // namespace fj::detail
