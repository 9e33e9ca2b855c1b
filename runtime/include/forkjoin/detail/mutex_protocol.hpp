// fj::mutex's protocol (docs/design/sync.md#steps, step 6): the state word, the queue of waiters
// and the hand-over, without the wait itself (the mutex parks or blocks; the model test spins).
//
// The word holds k_locked and k_waiters; k_waiters is set exactly while the queue holds a waiter.
// Both bits change only under the queue lock, except k_locked's fast paths (0 -> locked in
// try_lock(), locked -> 0 in try_unlock()), which need the word to be exactly that value: with
// k_waiters set, every unlock takes the slow path and every lock fails to barge.
//
// Atomics and QueueLock: std_atomics and std::mutex in the runtime; the model test passes
// Relacy's (atomics.hpp).
#pragma once

#include "atomics.hpp"
#include "sync_waiter.hpp"

#include <cstdint>
#include <mutex>

namespace fj::detail {

template <class Atomics = std_atomics, class QueueLock = std::mutex>
class mutex_protocol {
public:
    using waiter = basic_sync_waiter<Atomics>;

    // The fast lock. acquire: pairs with the release of the unlock that freed it (try_unlock(),
    // or hand_over()'s store of 0).
    bool try_lock() noexcept {
        std::uint32_t expected = 0;
        return m_state.compare_exchange_strong(expected, k_locked, std::memory_order_acquire,
                                               std::memory_order_relaxed);
    }

    // The fast unlock; false when a waiter is queued (then call hand_over()). release: pairs with
    // the next owner's acquire in try_lock() or take_or_queue().
    bool try_unlock() noexcept {
        std::uint32_t expected = k_locked;
        return m_state.compare_exchange_strong(expected, 0, std::memory_order_release,
                                               std::memory_order_relaxed);
    }

    // The slow lock: takes the mutex if it is free (true), or queues `w` (false; the caller waits
    // for w's release, which hands the mutex over).
    bool take_or_queue(waiter& w) {
        std::lock_guard guard(m_queue_lock);
        std::uint32_t state = m_state.load(std::memory_order_relaxed);
        for (;;) {
            if ((state & k_locked) == 0) {
                // Free, so nobody waits (a queued waiter keeps it locked). acquire: as try_lock().
                if (m_state.compare_exchange_weak(state, k_locked, std::memory_order_acquire,
                                                  std::memory_order_relaxed))
                    return true;
                continue;
            }
            // relaxed: one location, so the owner's try_unlock() either comes first (and the
            // retry sees the mutex free) or fails on this bit and comes to hand_over(), which
            // the queue lock orders after our push.
            if (m_state.compare_exchange_weak(state, state | k_waiters, std::memory_order_relaxed,
                                              std::memory_order_relaxed))
                break;
        }
        m_waiters.push_back(w);
        return false;
    }

    // The slow unlock: the oldest waiter, which now owns the mutex (release it after this
    // returns: its release publishes our critical section), or null if the queue emptied since
    // try_unlock() failed (a waiter timed out) and the mutex is free.
    waiter* hand_over() noexcept {
        std::lock_guard guard(m_queue_lock);
        if (m_waiters.empty()) {
            m_state.store(0, std::memory_order_release); // as try_unlock()
            return nullptr;
        }
        waiter& next = m_waiters.pop_front();
        next.outcome = wait_outcome::granted;
        if (m_waiters.empty())
            m_state.store(k_locked, std::memory_order_relaxed); // still locked: by `next`
        return &next;
    }

    // A timed-out waiter: true if it was still queued (it is taken out and marked timed out);
    // false if hand_over() took it first (the caller then waits for that release).
    bool withdraw(waiter& w) noexcept {
        std::lock_guard guard(m_queue_lock);
        if (w.outcome != wait_outcome::queued)
            return false;
        m_waiters.unlink(w);
        w.outcome = wait_outcome::timed_out;
        if (m_waiters.empty())
            m_state.fetch_and(~k_waiters, std::memory_order_relaxed); // fast unlocks again
        return true;
    }

    // For the destructor's check only (no lock: a waiter racing destruction is the bug reported).
    bool has_waiters() const noexcept { return !m_waiters.empty(); }

private:
    static constexpr std::uint32_t k_locked = 1;
    static constexpr std::uint32_t k_waiters = 2;

    typename Atomics::template atomic<std::uint32_t> m_state{0};
    QueueLock m_queue_lock; // guards m_waiters and the changes of k_waiters
    basic_waiter_queue<waiter> m_waiters;
};

} // namespace fj::detail
