// fj::condition_variable: a condition variable whose waiters are tasks, not threads. wait()
// parks the calling task (its worker runs other work) until a notify; off the pool, and where a
// task may not park, it blocks the thread as std::condition_variable's does. Named and used as
// std::condition_variable_any: wait(lock[, pred]), wait_for, wait_until, the std::stop_token
// forms, with any lock that has lock() and unlock() (std::unique_lock<fj::mutex> above all, but
// std::unique_lock<std::mutex> works too).
//
// Waiters are woken in the order they began to wait. As with std's, a wait may end without a
// notify only by its deadline or its stop request; wait(lock, pred) re-checks pred either way.
// In a coroutine, with <forkjoin/sync_await.hpp>: co_await cv.wait_async(lock), lock a
// std::unique_lock<fj::mutex> (docs/coroutines.md). docs/sync.md; the protocol:
// docs/design/sync.md.
#pragma once

#include <chrono>
#include <condition_variable> // std::cv_status
#include <mutex>
#include <stop_token>

#include <forkjoin/detail/sync_waiter.hpp>

namespace fj {

class mutex;
namespace detail {
class condition_awaiter; // <forkjoin/sync_await.hpp>
} // namespace detail

class condition_variable {
public:
    condition_variable() = default;
    condition_variable(const condition_variable&) = delete;
    condition_variable& operator=(const condition_variable&) = delete;
    // Destroying one that a task or thread waits on is a bug: reported, then std::abort().
    ~condition_variable();

    void notify_one() noexcept;
    void notify_all() noexcept;

    template <class Lock>
    void wait(Lock& lock) {
        detail::sync_waiter w;
        enqueue(w); // before unlocking: a notify after our unlock finds us queued
        lock.unlock();
        relock_after(lock,
                     [&] { detail::wait_released(w, detail::park_reason::condition_variable); });
    }

    // With <forkjoin/sync_await.hpp>, in a coroutine (see above).
    [[nodiscard]] detail::condition_awaiter wait_async(std::unique_lock<fj::mutex>& lock) noexcept;

    template <class Lock, class Predicate>
    void wait(Lock& lock, Predicate pred) {
        while (!pred())
            wait(lock);
    }

    template <class Lock, class Clock, class Duration>
    std::cv_status wait_until(Lock& lock,
                              const std::chrono::time_point<Clock, Duration>& deadline) {
        detail::sync_waiter w;
        enqueue(w);
        lock.unlock();
        relock_after(lock, [&] { wait_queued_until(w, to_steady(deadline)); });
        return w.outcome == detail::wait_outcome::timed_out ? std::cv_status::timeout
                                                            : std::cv_status::no_timeout;
    }

    template <class Lock, class Clock, class Duration, class Predicate>
    bool wait_until(Lock& lock, const std::chrono::time_point<Clock, Duration>& deadline,
                    Predicate pred) {
        while (!pred())
            if (wait_until(lock, deadline) == std::cv_status::timeout)
                return pred();
        return true;
    }

    template <class Lock, class Rep, class Period>
    std::cv_status wait_for(Lock& lock, const std::chrono::duration<Rep, Period>& timeout) {
        return wait_until(lock, std::chrono::steady_clock::now() + to_steady(timeout));
    }

    template <class Lock, class Rep, class Period, class Predicate>
    bool wait_for(Lock& lock, const std::chrono::duration<Rep, Period>& timeout, Predicate pred) {
        return wait_until(lock, std::chrono::steady_clock::now() + to_steady(timeout),
                          std::move(pred));
    }

    // std::condition_variable_any's stop_token forms: a stop request ends the wait; the result
    // is pred() at the end.
    template <class Lock, class Predicate>
    bool wait(Lock& lock, std::stop_token stop, Predicate pred) {
        while (!stop.stop_requested()) {
            if (pred())
                return true;
            wait_once(lock, stop, std::chrono::steady_clock::time_point::max());
        }
        return pred();
    }

    template <class Lock, class Clock, class Duration, class Predicate>
    bool wait_until(Lock& lock, std::stop_token stop,
                    const std::chrono::time_point<Clock, Duration>& deadline, Predicate pred) {
        const auto steady_deadline = to_steady(deadline);
        while (!stop.stop_requested()) {
            if (pred())
                return true;
            if (wait_once(lock, stop, steady_deadline) == detail::wait_outcome::timed_out)
                return pred();
        }
        return pred();
    }

    template <class Lock, class Rep, class Period, class Predicate>
    bool wait_for(Lock& lock, std::stop_token stop,
                  const std::chrono::duration<Rep, Period>& timeout, Predicate pred) {
        return wait_until(lock, std::move(stop),
                          std::chrono::steady_clock::now() + to_steady(timeout), std::move(pred));
    }

private:
    friend class detail::condition_awaiter;

    template <class Rep, class Period>
    static std::chrono::steady_clock::duration
    to_steady(const std::chrono::duration<Rep, Period>& d) {
        return std::chrono::ceil<std::chrono::steady_clock::duration>(d);
    }
    template <class Clock, class Duration>
    static std::chrono::steady_clock::time_point
    to_steady(const std::chrono::time_point<Clock, Duration>& t) {
        if constexpr (std::is_same_v<Clock, std::chrono::steady_clock>)
            return std::chrono::time_point_cast<std::chrono::steady_clock::duration>(t);
        else
            return std::chrono::steady_clock::now() + to_steady(t - Clock::now());
    }

    // Takes the lock back whatever the wait did, as std's wait does (it may not return with the
    // lock released).
    template <class Lock, class Wait>
    static void relock_after(Lock& lock, Wait wait) {
        struct relock {
            Lock& lock;
            ~relock() { lock.lock(); }
        } guard{lock};
        wait();
    }

    // One wait that a stop request also ends (as a notify of this waiter alone would).
    template <class Lock>
    detail::wait_outcome wait_once(Lock& lock, const std::stop_token& stop,
                                   std::chrono::steady_clock::time_point deadline) {
        detail::sync_waiter w;
        enqueue(w);
        lock.unlock();
        relock_after(lock, [&] {
            std::stop_callback on_stop(stop, [&]() noexcept { wake_one_waiter(w); });
            wait_queued_until(w, deadline);
        });
        return w.outcome;
    }

    void enqueue(detail::sync_waiter& w);
    // Waits for w's notify or deadline (time_point::max(): none).
    void wait_queued_until(detail::sync_waiter& w, std::chrono::steady_clock::time_point deadline);
    // Releases w if it is still queued (a stop request).
    void wake_one_waiter(detail::sync_waiter& w) noexcept;

    std::mutex m_lock; // guards m_waiters
    detail::waiter_queue m_waiters;
};

using condition_variable_any = condition_variable;

} // namespace fj
