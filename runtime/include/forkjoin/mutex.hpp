// fj::mutex: a mutex whose waiters are tasks, not threads. A task that finds it locked parks
// (its worker runs other work) and resumes to take it; off the pool, and where a task may not
// park, lock() blocks the thread as std::mutex's does. Named and used as std::mutex
// (std::lock_guard, std::unique_lock, std::scoped_lock), plus try_lock_for / try_lock_until.
//
// Fairness: a free mutex may be taken by anyone (no convoy of hand-overs under contention), and
// unlock() wakes the oldest waiter to compete for it; a waiter that loses goes back to the front
// of the queue, and one that has lost 3 times switches the mutex to hand-over (each unlock gives
// it to the oldest waiter) until it has the mutex: no waiter starves. One woken waiter at a time:
// an unlock wakes nobody while a woken waiter has not resumed. A locker that finds it held spins
// briefly before it parks. Uncontended, lock() and unlock() are one compare-exchange
// each.
// Unlike std::mutex, it may be unlocked by another thread than the one that locked it: a task
// that parked while holding it may resume on another worker.
// In a coroutine, with <forkjoin/sync_await.hpp>: co_await m.lock_async() (then unlock()), or
// co_await m.scoped_lock_async() for a std::unique_lock (docs/coroutines.md). docs/sync.md; the
// protocol: docs/design/sync.md.
#pragma once

#include <chrono>

#include <forkjoin/detail/mutex_protocol.hpp>
#include <forkjoin/detail/sync_waiter.hpp>

namespace fj {

class mutex;

namespace detail {
class mutex_lock_awaiter; // <forkjoin/sync_await.hpp>
struct mutex_scoped_lock_awaiter;
} // namespace detail

class mutex {
public:
    constexpr mutex() noexcept = default;
    mutex(const mutex&) = delete;
    mutex& operator=(const mutex&) = delete;
    // Destroying a mutex that a task or thread waits for is a bug: reported, then std::abort().
    ~mutex();

    void lock() {
        if (!m_protocol.try_lock_idle())
            lock_slow();
    }

    // Fails while the mutex is held (or being handed over to a waiter).
    bool try_lock() noexcept { return m_protocol.try_take(); }

    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
        return try_lock() ||
               lock_slow_until(std::chrono::steady_clock::now() +
                               std::chrono::ceil<std::chrono::steady_clock::duration>(timeout));
    }

    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        return try_lock() || lock_slow_until(std::chrono::steady_clock::now() +
                                             std::chrono::ceil<std::chrono::steady_clock::duration>(
                                                 deadline - Clock::now()));
    }

    void unlock() {
        if (!m_protocol.try_unlock())
            unlock_slow(); // a waiter is queued: hand the mutex over
    }

    // With <forkjoin/sync_await.hpp>, in a coroutine (see above).
    [[nodiscard]] detail::mutex_lock_awaiter lock_async() noexcept;
    [[nodiscard]] detail::mutex_scoped_lock_awaiter scoped_lock_async() noexcept;

private:
    friend class detail::mutex_lock_awaiter;
    bool lock_or_suspend(detail::mutex_lock_awaiter& a);
    bool spin_for_it() noexcept;
    void lock_slow();
    bool lock_slow_until(std::chrono::steady_clock::time_point deadline);
    void unlock_slow();

    detail::mutex_protocol<> m_protocol;
};

// std::timed_mutex's name, for code that ports by renaming: fj::mutex has the timed members.
using timed_mutex = mutex;

} // namespace fj
