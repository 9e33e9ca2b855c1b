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
//     ec.commit_wait();                            // sleeps until it takes a ticket
//
// A notify gives one ticket (sleep_word.hpp): exactly one of the counted threads takes it and
// leaves woken, whether it has blocked yet or not; the others stay. Why no wake-up is lost
// (docs/design/sleep.md): prepare_wait() is a seq_cst RMW on the state word and the producer's
// publication of work is a seq_cst store (or RMW) followed by a seq_cst load of that word. In the
// total order S either the producer's load comes after prepare_wait(), so it sees the waiter and
// gives a ticket (which some counted thread takes, after the ticket's release), or it comes before,
// and then the producer's store precedes the consumer's re-check, which therefore sees the work.
//
// Invariant: the word's waiters == number of threads between prepare_wait() and leaving;
//            tickets <= waiters. A notify with tickets == waiters adds nothing: every counted
//            thread already leaves woken.
//
// The word is held by reference: a pool keeps it in its public part (pool_core.hpp), where the
// inline fork path reads it, and this blocking half in runtime/src.
#pragma once

#include "state/sleep_word_ops.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace fj::detail {

class event_count {
public:
    using key = sleep_word::key;

    explicit event_count(sleep_word& word) noexcept : m_word(word) {}
    event_count(const event_count&) = delete;
    event_count& operator=(const event_count&) = delete;

    key prepare_wait() noexcept { return m_word.prepare_wait(); }
    // Returns true when the caller had to take a ticket (sleep_word::cancel_wait()): it leaves
    // as a woken thread.
    bool cancel_wait() noexcept { return m_word.cancel_wait(); }
    bool has_waiters() const noexcept { return m_word.has_waiters(); }

    // Blocks until it takes a ticket.
    void commit_wait() {
        (void)wait_for_ticket([this](std::unique_lock<std::mutex>& lock) {
            m_cv.wait(lock);
            return true;
        });
    }

    // As commit_wait(), but also returns at `deadline` without a ticket. The caller treats that
    // like a wake-up with nothing to do: it re-checks and may wait again. Returns whether it took
    // a ticket (false: the deadline passed).
    bool commit_wait_until(std::chrono::steady_clock::time_point deadline) {
        return wait_for_ticket([this, deadline](std::unique_lock<std::mutex>& lock) {
            return m_cv.wait_until(lock, deadline) == std::cv_status::no_timeout;
        });
    }

    // noexcept: callers notify after publishing work, when failing is no longer an option (a
    // mutex that cannot be locked here means a broken process: terminate).
    void notify_one() noexcept {
        if (m_word.has_waiters() && m_word.give_ticket())
            signal(false);
    }
    // A pool's wake-up (docs/design/sleep.md#searching): a ticket and a searching place, only
    // when nobody searches. Returns whether it gave one.
    bool notify_one_unless_searching() noexcept {
        if (!m_word.give_ticket_unless_searching())
            return false;
        signal(false);
        return true;
    }
    // Every counted thread leaves woken; `with_searching`: as a searcher of a pool.
    void notify_all(bool with_searching = false) noexcept {
        if (m_word.has_waiters() && m_word.give_all_tickets(with_searching) != 0)
            signal(true);
    }

private:
    // Takes a ticket, blocking in `wait_once(lock)` while there is none; leaves the count without
    // one when wait_once returns false (a timeout) unless it must take one (cancel_wait()).
    // Returns whether it took a ticket.
    template <class WaitOnce>
    bool wait_for_ticket(WaitOnce wait_once) {
        if (m_word.try_take_ticket())
            return true;
        std::unique_lock lock(m_mutex);
        // Tickets are looked for under the mutex, and notifiers give theirs before taking the
        // mutex, so a ticket cannot slip between this look and the wait.
        for (;;) {
            if (m_word.try_take_ticket())
                return true;
            if (!wait_once(lock))
                return m_word.try_take_ticket() || m_word.cancel_wait();
        }
    }

    void signal(bool all) noexcept {
        std::lock_guard lock(m_mutex); // empty critical section: orders us after a waiter's look
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
