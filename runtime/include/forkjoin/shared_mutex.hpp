// fj::shared_mutex: a reader-writer mutex whose waiters are tasks, not threads. A task that must
// wait parks (its worker runs other work) and resumes holding the lock; off the pool, and where a
// task may not park, the thread blocks as on std::shared_mutex. Named and used as
// std::shared_mutex (std::unique_lock, std::shared_lock, std::lock_guard), plus the timed
// members of std::shared_timed_mutex. Included on its own: <forkjoin/forkjoin.hpp> does not
// include it.
//
// Fairness, in arrival order (phase-fair FIFO): while anyone waits, nobody takes the lock past
// them, neither a newcomer nor a try_ form (which then fails). A writer that waits therefore
// stops new readers, so a stream of readers cannot starve it; and when a writer unlocks, every
// reader queued before the next writer is admitted together, so a stream of writers cannot
// starve readers. Each unlock that frees the lock hands it to the front of the queue (the lock
// never goes free while someone waits for it). Uncontended, lock(), unlock(), lock_shared() and
// unlock_shared() are one atomic read-modify-write each; a locker that finds the lock taken
// spins briefly before it queues.
// Unlike std::shared_mutex, it may be unlocked by another thread than the one that locked it: a
// task that parked while holding it may resume on another worker.
// In a coroutine, with <forkjoin/sync_await.hpp>: co_await m.lock_async() (then unlock()), or
// co_await m.lock_shared_async() (then unlock_shared()) (docs/coroutines.md).
// docs/sync.md; the protocol: docs/design/sync.md#steps, step 15.
#pragma once

#include <chrono>
#include <cstdint>

#include <forkjoin/detail/shared_mutex_protocol.hpp>
#include <forkjoin/detail/sync_waiter.hpp>

namespace fj {

class shared_mutex {
public:
    constexpr shared_mutex() noexcept = default;
    shared_mutex(const shared_mutex&) = delete;
    shared_mutex& operator=(const shared_mutex&) = delete;
    // Destroying a shared mutex that a task or thread waits for is a bug: reported, then
    // std::abort().
    ~shared_mutex();

    // Exclusive ownership (a writer).
    void lock() {
        if (!m_protocol.try_lock())
            lock_slow(false);
    }

    // Fails while anyone holds the lock or waits for it.
    bool try_lock() noexcept { return m_protocol.try_lock(); }

    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
        return try_lock() || lock_slow_until(false, deadline_after(timeout));
    }

    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        return try_lock() || lock_slow_until(false, deadline_after(deadline - Clock::now()));
    }

    void unlock() {
        if (!m_protocol.try_unlock())
            unlock_slow(); // a waiter is queued: hand the lock over
    }

    // Shared ownership (a reader).
    void lock_shared() {
        if (!m_protocol.try_lock_shared())
            lock_slow(true);
    }

    // Fails while a writer holds the lock, or anyone waits for it.
    bool try_lock_shared() noexcept { return m_protocol.try_lock_shared(); }

    template <class Rep, class Period>
    bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& timeout) {
        return try_lock_shared() || lock_slow_until(true, deadline_after(timeout));
    }

    template <class Clock, class Duration>
    bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        return try_lock_shared() || lock_slow_until(true, deadline_after(deadline - Clock::now()));
    }

    void unlock_shared() {
        if (!m_protocol.try_unlock_shared())
            unlock_shared_slow(); // the last reader out, with a waiter queued: hand over
    }

    // With <forkjoin/sync_await.hpp>, in a coroutine (see above): the lock is the coroutine's
    // when co_await returns.
    [[nodiscard]] detail::queue_awaiter lock_async() noexcept;
    [[nodiscard]] detail::queue_awaiter lock_shared_async() noexcept;

private:
    template <class Rep, class Period>
    static std::chrono::steady_clock::time_point
    deadline_after(const std::chrono::duration<Rep, Period>& timeout) {
        return std::chrono::steady_clock::now() +
               std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
    }

    // Takes the lock (true), or queues `w` for it (false: w's release grants it). For the
    // blocking forms and the coroutines' (queue_awaiter: `shared` 0 or 1).
    static bool lock_or_queue(void* self, std::uint64_t shared, detail::sync_waiter& w);
    bool spin_for_it(bool shared) noexcept;
    void lock_slow(bool shared);
    bool lock_slow_until(bool shared, std::chrono::steady_clock::time_point deadline);
    void unlock_slow();
    void unlock_shared_slow();

    detail::shared_mutex_protocol<> m_protocol;
};

// std::shared_timed_mutex's name, for code that ports by renaming: fj::shared_mutex has the
// timed members.
using shared_timed_mutex = shared_mutex;

} // namespace fj
