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
// Why no wake-up is lost (docs/design.md#sleep): prepare_wait() is a seq_cst RMW on m_state and
// the producer's publication of work is a seq_cst store (or RMW) followed by a seq_cst load of
// m_state. In the total order S either the producer's load comes after prepare_wait(), so it sees
// the waiter and notifies (the epoch bump makes commit_wait() return at once, even if the consumer
// has not reached it yet), or it comes before, and then the producer's store precedes the
// consumer's re-check, which therefore sees the work.
//
// Invariant: waiters(m_state) == number of threads between prepare_wait() and the end of
//            cancel_wait()/commit_wait(). A notify with waiters == 0 does nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace fj::detail {

class event_count {
public:
    using key = std::uint64_t;

    key prepare_wait() noexcept {
        // seq_cst: the consumer's half of the Dekker pair described above.
        return m_state.fetch_add(k_one_waiter, std::memory_order_seq_cst);
    }

    void cancel_wait() noexcept {
        // relaxed: leaving changes nothing anyone waits for; a notify that saw us wasted one bump.
        m_state.fetch_sub(k_one_waiter, std::memory_order_relaxed);
    }

    // Blocks until a notify after the prepare_wait() that returned `k`.
    void commit_wait(key k) {
        wait_for_new_epoch(k, [this](std::unique_lock<std::mutex>& lock) {
            m_cv.wait(lock);
            return true;
        });
    }

    // As commit_wait(), but also returns at `deadline` without a notify. The caller treats that
    // like a wake-up with nothing to do: it re-checks and may wait again.
    void commit_wait_until(key k, std::chrono::steady_clock::time_point deadline) {
        wait_for_new_epoch(k, [this, deadline](std::unique_lock<std::mutex>& lock) {
            return m_cv.wait_until(lock, deadline) == std::cv_status::no_timeout;
        });
    }

    // True when some thread is between prepare_wait() and commit/cancel. seq_cst: the producer's
    // load half of the Dekker pair; it must follow the producer's seq_cst publication of work.
    bool has_waiters() const noexcept {
        return (m_state.load(std::memory_order_seq_cst) & k_waiter_mask) != 0;
    }

    // noexcept: callers notify after publishing work, when failing is no longer an option (a
    // mutex that cannot be locked here means a broken process: terminate).
    void notify_one() noexcept { notify(false); }
    void notify_all() noexcept { notify(true); }

private:
    // Blocks in `wait_once(lock)` until the epoch moves past the one prepare_wait() returned in
    // `k`, or wait_once returns false (a timeout); then leaves the waiter count.
    template <class WaitOnce>
    void wait_for_new_epoch(key k, WaitOnce wait_once) {
        const std::uint64_t epoch = k >> k_epoch_shift;
        {
            std::unique_lock lock(m_mutex);
            // The epoch is re-read under the mutex, and notifiers bump it before taking the mutex,
            // so a notify cannot slip between this check and the wait.
            while ((m_state.load(std::memory_order_acquire) >> k_epoch_shift) == epoch)
                if (!wait_once(lock))
                    break;
        }
        m_state.fetch_sub(k_one_waiter, std::memory_order_relaxed);
    }

    void notify(bool all) noexcept {
        if (!has_waiters())
            return; // the fast path: one load, no syscall
        // acq_rel: the bump is what a waiter's acquire load of the epoch observes.
        m_state.fetch_add(k_one_epoch, std::memory_order_acq_rel);
        std::lock_guard lock(m_mutex); // empty critical section: orders us after a waiter's check
        if (all)
            m_cv.notify_all();
        else
            m_cv.notify_one();
    }

    static constexpr int k_epoch_shift = 32;
    static constexpr std::uint64_t k_one_waiter = 1;
    static constexpr std::uint64_t k_one_epoch = std::uint64_t{1} << k_epoch_shift;
    static constexpr std::uint64_t k_waiter_mask = k_one_epoch - 1;

    std::atomic<std::uint64_t> m_state{0}; // low 32 bits: waiters; high 32 bits: epoch
    std::mutex m_mutex;
    std::condition_variable m_cv;
};

} // namespace fj::detail
