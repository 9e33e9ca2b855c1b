// fj::mutex's protocol (docs/design/sync.md#steps, step 6): the state word, the queue of waiters,
// waking and handing over, without the wait itself (the mutex parks or blocks; the model test
// spins).
//
// The word holds four bits:
//   k_locked        the mutex is held;
//   k_waiters       the queue holds a waiter (set exactly then, changed only under the queue lock);
//   k_handing_over  the hand-over mode: unlock() gives the mutex to the oldest waiter, and nobody
//                   else may take it; set only while k_locked and k_waiters are;
//   k_woken         a waiter has been woken and has not yet resumed: unlock() wakes nobody else.
// Normally the mutex is free for anyone to take ("barging"): unlock() frees it and wakes the
// oldest waiter, which competes for it with newcomers; a woken waiter that loses goes back to the
// front of the queue. A waiter that has lost often enough asks for the hand-over mode, which
// lasts until that waiter has been given the mutex (or the queue is empty), so nobody waits for
// ever and no convoy of hand-overs outlives the waiter it serves. The fast paths need the word to
// be exactly 0 (lock) or k_locked (unlock); everything else goes through the queue lock.
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

    // The fast lock: only an idle mutex (no waiter). acquire: pairs with the release of the
    // unlock that freed it.
    bool try_lock_idle() noexcept {
        std::uint32_t expected = 0;
        return m_state.compare_exchange_strong(expected, k_locked, std::memory_order_acquire,
                                               std::memory_order_relaxed);
    }

    // Takes the mutex if it is free and not being handed over, queued waiters or not. acquire:
    // as try_lock_idle().
    bool try_take() noexcept {
        std::uint32_t state = m_state.load(std::memory_order_relaxed);
        while ((state & (k_locked | k_handing_over)) == 0)
            if (m_state.compare_exchange_weak(state, state | k_locked, std::memory_order_acquire,
                                              std::memory_order_relaxed))
                return true;
        return false;
    }

    // The fast unlock: an idle mutex, or one whose woken waiter has not resumed yet (outside the
    // hand-over mode), which release_one() would only free: nobody else is to be woken. False
    // otherwise (then call release_one()). release: pairs with the next owner's acquire.
    bool try_unlock() noexcept {
        std::uint32_t expected = k_locked;
        if (m_state.compare_exchange_strong(expected, 0, std::memory_order_release,
                                            std::memory_order_relaxed))
            return true;
        while ((expected & (k_locked | k_woken | k_handing_over)) == (k_locked | k_woken))
            if (m_state.compare_exchange_weak(expected, expected & ~k_locked,
                                              std::memory_order_release, std::memory_order_relaxed))
                return true;
        return false;
    }

    // A woken waiter has resumed: from now on an unlock may wake another. relaxed: a hint for
    // the unlocks; what the waiter then does (take, or queue under the queue lock) is ordered by
    // its own operations.
    void end_wake() noexcept { m_state.fetch_and(~k_woken, std::memory_order_relaxed); }

    // The slow lock: takes the mutex as try_take() does (true), or queues `w` (false): at the
    // back, or at the front for a woken waiter that lost (`again`); with `hand_over` it switches
    // the mutex to the hand-over mode until `w` has it. The caller then waits for w's release.
    bool take_or_queue(waiter& w, bool again, bool hand_over) {
        std::lock_guard guard(m_queue_lock);
        std::uint32_t state = m_state.load(std::memory_order_relaxed);
        for (;;) {
            if ((state & (k_locked | k_handing_over)) == 0) {
                if (m_state.compare_exchange_weak(state, state | k_locked,
                                                  std::memory_order_acquire,
                                                  std::memory_order_relaxed))
                    return true;
                continue;
            }
            // relaxed: one location, so the owner's try_unlock() either comes first (and the
            // retry finds the mutex free) or fails on k_waiters and comes to release_one(),
            // which the queue lock orders after our push. k_locked is set here, so the hand-over
            // mode is only ever set on a held mutex.
            const std::uint32_t wanted = state | k_waiters | (hand_over ? k_handing_over : 0);
            if (m_state.compare_exchange_weak(state, wanted, std::memory_order_relaxed,
                                              std::memory_order_relaxed))
                break;
        }
        w.outcome = wait_outcome::queued;
        w.asked_hand_over = hand_over;
        if (again)
            m_waiters.push_front(w);
        else
            m_waiters.push_back(w);
        return false;
    }

    // The slow unlock. Returns the waiter to release after this returns (its release publishes
    // our critical section), or null when nobody is to be released: the queue emptied since
    // try_unlock() failed (a waiter timed out), or a woken waiter has not resumed yet; the mutex
    // is then free. In the hand-over mode the oldest waiter is granted the mutex, which stays
    // held; otherwise the mutex is freed and the oldest waiter woken to compete for it.
    waiter* release_one() noexcept {
        std::lock_guard guard(m_queue_lock);
        const std::uint32_t state = m_state.load(std::memory_order_relaxed);
        if (m_waiters.empty() || ((state & k_woken) != 0 && (state & k_handing_over) == 0)) {
            // release: as try_unlock(). A fetch_and: a woken waiter may clear k_woken meanwhile.
            m_state.fetch_and(~k_locked, std::memory_order_release);
            return nullptr;
        }
        waiter& next = m_waiters.pop_front();
        const bool empty = m_waiters.empty();
        if ((state & k_handing_over) != 0) {
            next.outcome = wait_outcome::granted;
            // Held by `next` now; the mode ends with the waiter that asked for it. relaxed: the
            // mutex stays held, and `next` learns of it through its release.
            std::uint32_t clear = 0;
            if (next.asked_hand_over || empty)
                clear |= k_handing_over;
            if (empty)
                clear |= k_waiters;
            if (clear != 0)
                m_state.fetch_and(~clear, std::memory_order_relaxed);
            return &next;
        }
        next.outcome = wait_outcome::woken;
        // Free the mutex and mark a wake-up in flight, in one RMW: nothing but a woken waiter's
        // end_wake() changes the word meanwhile (it is held, and we hold the queue lock), and
        // k_woken is clear here. release: as try_unlock(); the next owner's acquire takes our
        // critical section.
        const std::uint32_t clear = k_locked | (empty ? k_waiters : 0);
        std::uint32_t expected = state;
        while (!m_state.compare_exchange_weak(expected, (expected & ~clear) | k_woken,
                                              std::memory_order_release,
                                              std::memory_order_relaxed)) {
        }
        return &next;
    }

    // A timed-out waiter: true if it was still queued (taken out, marked timed out); false if
    // release_one() took it first (the caller then waits for that release).
    bool withdraw(waiter& w) noexcept {
        std::lock_guard guard(m_queue_lock);
        if (w.outcome != wait_outcome::queued)
            return false;
        m_waiters.unlink(w);
        w.outcome = wait_outcome::timed_out;
        std::uint32_t clear = 0;
        if (m_waiters.empty()) // fast unlocks again, and no hand-over to nobody
            clear = k_waiters | k_handing_over;
        else if (w.asked_hand_over) // the mode served this waiter only
            clear = k_handing_over;
        if (clear != 0)
            m_state.fetch_and(~clear, std::memory_order_relaxed);
        return true;
    }

    // For the destructor's check only (no lock: a waiter racing destruction is the bug reported).
    bool has_waiters() const noexcept { return !m_waiters.empty(); }

private:
    static constexpr std::uint32_t k_locked = 1;
    static constexpr std::uint32_t k_waiters = 2;
    static constexpr std::uint32_t k_handing_over = 4;
    static constexpr std::uint32_t k_woken = 8;

    typename Atomics::template atomic<std::uint32_t> m_state{0};
    QueueLock m_queue_lock; // guards m_waiters and the changes of k_waiters and k_handing_over
    basic_waiter_queue<waiter> m_waiters;
};

} // namespace fj::detail
