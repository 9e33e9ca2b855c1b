// fj::shared_mutex's protocol (docs/design/sync.md#steps, step 15): the state word, the queue of
// readers and writers, and the hand-over, without the wait itself (the shared mutex parks or
// blocks; the model test spins).
//
// The word holds:
//   k_writer   a writer holds the lock;
//   k_waiters  the queue holds a waiter (set exactly then, changed only under the queue lock);
//   readers    the number of readers holding the lock, in units of k_reader (bits 2 and up).
// A writer and readers never hold it together. While a waiter is queued nobody takes the lock
// by a fast path or a try: newcomers queue behind it, and every release of the lock hands it
// over under the queue lock, in arrival order: to the writer at the front, or to every reader
// from the front up to the next writer, together (phase-fair FIFO). A waiter is queued only
// while the lock is held or about to be handed over, so some unlock always comes to hand over.
//
// Every change of the word is a read-modify-write. So each release that changes it heads a
// release sequence that runs through every later change, and an acquire that reads any later
// value synchronizes with all of them: a writer that takes the lock after several readers left
// sees every one of their critical sections, though only the last reader's unlock freed it.
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
class shared_mutex_protocol {
public:
    using waiter = basic_sync_waiter<Atomics>;
    using waiters = basic_waiter_queue<waiter>;

    // 15a. The fast lock: a free lock with nobody queued. acquire: pairs with the release of the
    // unlock, shared unlock or hand-over that freed it (through the release sequence above).
    bool try_lock() noexcept {
        std::uint32_t expected = 0;
        return m_state.compare_exchange_strong(expected, k_writer, std::memory_order_acquire,
                                               std::memory_order_relaxed);
    }

    // 15a. The fast shared lock: no writer holds it and nobody is queued. acquire: pairs with the
    // release of the last writer's unlock or hand-over.
    bool try_lock_shared() noexcept {
        std::uint32_t state = m_state.load(std::memory_order_relaxed);
        while ((state & (k_writer | k_waiters)) == 0)
            if (m_state.compare_exchange_weak(state, state + k_reader, std::memory_order_acquire,
                                              std::memory_order_relaxed))
                return true;
        return false;
    }

    // 15a. The fast unlock: nobody queued. False otherwise (then call hand_over()). release: pairs
    // with the next owner's acquire.
    bool try_unlock() noexcept {
        std::uint32_t expected = k_writer;
        return m_state.compare_exchange_strong(expected, 0, std::memory_order_release,
                                               std::memory_order_relaxed);
    }

    // 15a. The shared unlock, always done here. False when this was the last reader and a waiter
    // is queued: then call admit_if_free() (15d), which hands the lock over. release: pairs with
    // the acquire of the writer that takes it next (its fast lock, or admit_if_free()'s load).
    bool try_unlock_shared() noexcept {
        return m_state.fetch_sub(k_reader, std::memory_order_release) != (k_reader | k_waiters);
    }

    // 15b. The slow lock: takes a free lock with nobody queued (true), or queues `w` at the back
    // (false); the caller then waits for w's release, which grants it the lock.
    bool lock_or_queue(waiter& w) { return take_or_queue(w, false); }
    // 15b. The same for a shared lock.
    bool lock_shared_or_queue(waiter& w) { return take_or_queue(w, true); }

    // 15c. The writer's slow unlock (try_unlock() failed: a waiter is queued, or was). Hands the
    // lock to the front of the queue, or frees it if the queue has emptied. Returns the waiters
    // to release after this returns (their release publishes our critical section).
    waiters hand_over() noexcept {
        std::lock_guard guard(m_queue_lock);
        if (m_waiters.empty()) {
            // A timed-out waiter left. release: as try_unlock(). A fetch_and keeps the word's
            // changes read-modify-writes (nothing else changes it meanwhile: we hold it).
            m_state.fetch_and(~k_writer, std::memory_order_release);
            return {};
        }
        return admit_front();
    }

    // 15d. The last reader's slow unlock (try_unlock_shared() returned false). If the lock is still
    // free, hands it to the front of the queue; it is not when the queue emptied meanwhile (a
    // waiter timed out) and someone took the lock by a fast path: then that owner's unlock hands
    // over. acquire: pairs with every reader's release in try_unlock_shared(), so the writer we
    // grant the lock to sees all their critical sections.
    waiters admit_if_free() noexcept {
        std::lock_guard guard(m_queue_lock);
        const std::uint32_t state = m_state.load(std::memory_order_acquire);
        if (m_waiters.empty() || (state & ~k_waiters) != 0)
            return {};
        return admit_front();
    }

    // 15e. A timed-out waiter: true if it was still queued (taken out, marked timed out); false if
    // an unlock granted it the lock first (the caller then waits for that release, and owns the
    // lock). A writer that leaves the front while readers hold the lock lets the readers queued
    // behind it in: they go to `admitted`, to be released after this returns.
    bool withdraw(waiter& w, waiters& admitted) noexcept {
        std::lock_guard guard(m_queue_lock);
        if (w.outcome != wait_outcome::queued)
            return false;
        m_waiters.unlink(w);
        w.outcome = wait_outcome::timed_out;
        if (m_waiters.empty()) {
            // Fast paths again. relaxed: the word's value is unchanged otherwise, and its release
            // sequence runs through this change.
            m_state.fetch_and(~k_waiters, std::memory_order_relaxed);
            return true;
        }
        // acquire: the readers let in must see the last writer's critical section, whose release
        // heads a sequence this load reads from.
        const std::uint32_t state = m_state.load(std::memory_order_acquire);
        if ((state & k_writer) == 0 && state >= k_reader && m_waiters.front()->wants_shared)
            admitted = admit_front();
        return true;
    }

    // For the destructor's check only: a waiter racing destruction is the bug reported. The
    // word's k_waiters bit, not the queue: set exactly while a waiter is queued, and an atomic, so
    // the check itself is no data race (ThreadSanitizer would report one before the message).
    // relaxed: the destructor's thread already sees the waiter (it failed to take the lock
    // past it), or has no reason to; either way nothing is read through it.
    bool has_waiters() const noexcept {
        return (m_state.load(std::memory_order_relaxed) & k_waiters) != 0;
    }

private:
    static constexpr std::uint32_t k_writer = 1;
    static constexpr std::uint32_t k_waiters = 2;
    static constexpr std::uint32_t k_reader = 4;

    bool take_or_queue(waiter& w, bool shared) {
        std::lock_guard guard(m_queue_lock);
        std::uint32_t state = m_state.load(std::memory_order_relaxed);
        for (;;) {
            // Free for us: no waiter queued and no writer (nor, for a writer, any reader).
            // acquire: as try_lock() and try_lock_shared().
            const bool free = shared ? (state & (k_writer | k_waiters)) == 0 : state == 0;
            if (free) {
                if (m_state.compare_exchange_weak(state, shared ? state + k_reader : k_writer,
                                                  std::memory_order_acquire,
                                                  std::memory_order_relaxed))
                    return true;
                continue;
            }
            if ((state & k_waiters) != 0)
                break;
            // relaxed: one location, so the owner's fast unlock either comes first (and the
            // retry finds the lock free) or sees k_waiters and comes to hand_over() or
            // admit_if_free(), which the queue lock orders after our push.
            if (m_state.compare_exchange_weak(state, state | k_waiters, std::memory_order_relaxed,
                                              std::memory_order_relaxed))
                break;
        }
        w.outcome = wait_outcome::queued;
        w.wants_shared = shared;
        m_waiters.push_back(w);
        return false;
    }

    // Under the queue lock, with the queue not empty: grants the lock to the writer at the
    // front, or to the readers from the front up to the next writer, together, and sets the word
    // to what its holders then are, with k_waiters as the queue now is. The word then holds the
    // unlocking writer (hand_over(), replaced), nobody (admit_if_free()) or readers already in
    // (withdraw(), which admits readers only), so the other changes that may race ours are
    // shared unlocks: the CAS recomputes from what it finds. A shared unlock that ends at 0
    // meanwhile comes to admit_if_free(), which the queue lock orders after us and which then
    // finds the lock held.
    waiters admit_front() noexcept {
        waiters granted;
        const bool writer = !m_waiters.front()->wants_shared;
        std::uint32_t readers = 0;
        if (writer) {
            granted.push_back(m_waiters.pop_front());
        } else {
            while (!m_waiters.empty() && m_waiters.front()->wants_shared) {
                granted.push_back(m_waiters.pop_front());
                readers += k_reader;
            }
        }
        for (waiter* w = granted.front(); w != nullptr; w = w->next)
            w->outcome = wait_outcome::granted;
        const std::uint32_t queued = m_waiters.empty() ? 0 : k_waiters;
        // release: the granted waiters learn through their release, but this change heads a
        // release sequence that later lockers read: a writer handing over publishes its critical
        // section to a reader that comes by the fast path while the readers it let in hold the
        // lock.
        std::uint32_t expected = m_state.load(std::memory_order_relaxed);
        for (;;) {
            const std::uint32_t wanted =
                writer ? k_writer | queued
                       : ((expected & ~(k_writer | k_waiters)) + readers) | queued;
            if (m_state.compare_exchange_weak(expected, wanted, std::memory_order_release,
                                              std::memory_order_relaxed))
                break;
        }
        return granted;
    }

    typename Atomics::template atomic<std::uint32_t> m_state{0};
    QueueLock m_queue_lock; // guards m_waiters and the changes of k_waiters
    waiters m_waiters;
};

} // namespace fj::detail
