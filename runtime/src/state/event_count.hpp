// An event count: lets idle workers sleep without missing a wake-up, while a producer that finds
// nobody sleeping pays one load and no read-modify-write or syscall.
//
// The recipe (the consumer re-checks every source of work between prepare and commit):
//
//     // consumer (an idle worker)                 // producer
//     auto key = ec.prepare_wait();                queue.push(item);        // a seq_cst store/RMW
//     if (work_available()) {                      ec.notify_one();         // seq_cst load first
//         ec.cancel_wait();
//         return;  // go and take it
//     }
//     ec.commit_wait(key);                         // sleeps unless notified since prepare_wait()
//
// Why no wake-up is lost (docs/design/sleep.md): prepare_wait() is a seq_cst RMW on the state word
// (sleep_word.hpp) and the producer's publication of work is a seq_cst store (or RMW) followed by
// a seq_cst load of that word. In the total order S either the producer's load comes after
// prepare_wait(), so it sees the waiter and notifies (the epoch bump makes commit_wait() return at
// once, even if the consumer has not reached it yet), or it comes before, and then the producer's
// store precedes the consumer's re-check, which therefore sees the work.
//
// Invariant: the word's waiters == number of threads between prepare_wait() and the end of
//            cancel_wait()/commit_wait(). A notify with waiters == 0 does nothing.
//
// The word is held by reference: a pool keeps it in its public part (pool_core.hpp), where the
// inline fork path reads it, and this blocking half in runtime/src.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include <forkjoin/detail/sleep_word.hpp>

namespace fj::detail {

class event_count {
public:
    using key = sleep_word::key;

    explicit event_count(sleep_word& word) noexcept : m_word(word) {}
    event_count(const event_count&) = delete;
    event_count& operator=(const event_count&) = delete;

    key prepare_wait() noexcept { return m_word.prepare_wait(); }
    void cancel_wait() noexcept { m_word.cancel_wait(); }
    bool has_waiters() const noexcept { return m_word.has_waiters(); }

    // Blocks until a notify after the prepare_wait() that returned `k`.
    void commit_wait(key k) {
        (void)wait_for_new_epoch(k, [this](std::unique_lock<std::mutex>& lock) {
            m_cv.wait(lock);
            return true;
        });
    }

    // As commit_wait(), but also returns at `deadline` without a notify. The caller treats that
    // like a wake-up with nothing to do: it re-checks and may wait again. Returns false when the
    // deadline passed with no notify since prepare_wait().
    bool commit_wait_until(key k, std::chrono::steady_clock::time_point deadline) {
        return wait_for_new_epoch(k, [this, deadline](std::unique_lock<std::mutex>& lock) {
            return m_cv.wait_until(lock, deadline) == std::cv_status::no_timeout;
        });
    }

    // noexcept: callers notify after publishing work, when failing is no longer an option (a
    // mutex that cannot be locked here means a broken process: terminate).
    void notify_one() noexcept { notify(false); }
    void notify_all() noexcept { notify(true); }

private:
    // Blocks in `wait_once(lock)` until the epoch moves past the one prepare_wait() returned in
    // `k`, or wait_once returns false (a timeout); then leaves the waiter count. Returns whether
    // the epoch moved.
    template <class WaitOnce>
    bool wait_for_new_epoch(key k, WaitOnce wait_once) {
        const std::uint32_t epoch = sleep_word::epoch_of(k);
        bool notified = true;
        {
            std::unique_lock lock(m_mutex);
            // The epoch is re-read under the mutex, and notifiers bump it before taking the mutex,
            // so a notify cannot slip between this check and the wait.
            while (m_word.epoch() == epoch)
                if (!wait_once(lock)) {
                    notified = m_word.epoch() != epoch;
                    break;
                }
        }
        m_word.cancel_wait(); // the same relaxed decrement: leaving after the wait
        return notified;
    }

    void notify(bool all) noexcept {
        if (!m_word.has_waiters())
            return; // the fast path: one load, no syscall
        m_word.bump_epoch();
        std::lock_guard lock(m_mutex); // empty critical section: orders us after a waiter's check
        if (all)
            m_cv.notify_all();
        else
            m_cv.notify_one();
    }

    sleep_word& m_word;
    std::mutex m_mutex;
    std::condition_variable m_cv;
};

} // namespace fj::detail
