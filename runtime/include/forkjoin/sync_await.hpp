// co_await on the task-parking primitives, from any coroutine type (fj::task, a library's, your
// own), without holding a thread or a fiber while it waits:
//
//   co_await m.lock_async();                          // fj::mutex; then m.unlock()
//   co_await sm.lock_async();                         // fj::shared_mutex; then sm.unlock()
//   co_await sm.lock_shared_async();                  // then sm.unlock_shared()
//   std::unique_lock lock = co_await m.scoped_lock_async();
//   co_await cv.wait_async(lock);                     // lock: std::unique_lock<fj::mutex>
//   co_await l.wait_async();                          // fj::latch
//   co_await b.arrive_and_wait_async();               // fj::barrier (or wait_async(token))
//   co_await s.acquire_async();                       // fj::counting_semaphore
//   co_await ch.send_async(v);                        // fj::channel: throws fj::channel_closed
//   std::optional<T> v = co_await ch.receive_async(); // empty once closed and drained
//   co_await fj::this_task::sleep_for_async(d);       // or sleep_until_async(steady time point)
//
// What is free (or due) does not suspend. A waiting coroutine is in the primitive's queue with
// parked tasks and blocked threads, with the same order and fairness, and is resumed as a
// queued task: on the pool of whoever released it (the unlocker, the notifier, the last
// count-down, the sender...), or, released outside every pool (a plain thread, the timer of a
// sleep), on the pool it waited on if that still takes work, else on the default scheduler.
// docs/coroutines.md#waiting-on-the-task-parking-primitives; the protocol:
// docs/design/sync.md#coroutines.
//
// A separate header: the members are declared with the primitives, and defined here (the
// umbrella <forkjoin/forkjoin.hpp> stays as light as a program without coroutines needs).
#pragma once

#include <coroutine>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include <forkjoin/barrier.hpp>
#include <forkjoin/channel.hpp>
#include <forkjoin/condition_variable.hpp>
#include <forkjoin/detail/coroutine_waiter.hpp>
#include <forkjoin/latch.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/semaphore.hpp>
#include <forkjoin/shared_mutex.hpp>
#include <forkjoin/this_task.hpp>

namespace fj {
namespace detail {

// What co_await m.lock_async() suspends on (runtime/src/sync/mutex.cpp); a std::unique_lock
// that owns the mutex comes out of scoped_lock_async()'s.
class mutex_lock_awaiter : public coroutine_waiter {
public:
    explicit mutex_lock_awaiter(fj::mutex& m) noexcept : m_mutex(m) { m_retry = &retry; }
    bool await_ready() noexcept;
    bool await_suspend(std::coroutine_handle<> h); // false: the mutex is ours
    void await_resume() const noexcept {}

protected:
    fj::mutex& m_mutex;

private:
    friend class fj::mutex;
    static bool retry(coroutine_waiter& self) noexcept;
    int m_lost = 0; // wake-ups lost to newcomers, as lock()'s
};
struct mutex_scoped_lock_awaiter : mutex_lock_awaiter {
    using mutex_lock_awaiter::mutex_lock_awaiter;
    std::unique_lock<fj::mutex> await_resume() const noexcept { return {m_mutex, std::adopt_lock}; }
};

// What co_await cv.wait_async(lock) suspends on (runtime/src/sync/condition_variable.cpp).
class condition_awaiter : public coroutine_waiter {
public:
    condition_awaiter(fj::condition_variable& cv, std::unique_lock<fj::mutex>& lock) noexcept
        : m_cv(cv), m_lock(lock), m_relock(*lock.mutex()) {
        m_retry = &relock;
    }
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h);
    void await_resume() noexcept;

private:
    static bool relock(coroutine_waiter& self) noexcept;
    fj::condition_variable& m_cv;
    std::unique_lock<fj::mutex>& m_lock;
    mutex_lock_awaiter m_relock;
    std::coroutine_handle<> m_handle;
};

} // namespace detail

inline detail::mutex_lock_awaiter mutex::lock_async() noexcept {
    return detail::mutex_lock_awaiter(*this);
}
inline detail::mutex_scoped_lock_awaiter mutex::scoped_lock_async() noexcept {
    return detail::mutex_scoped_lock_awaiter(*this);
}
inline bool detail::mutex_lock_awaiter::await_ready() noexcept {
    return m_mutex.m_protocol.try_lock_idle();
}

// The shared mutex hands the lock over on release (never a wake-up to compete), so a plain
// queue_awaiter is its coroutine form: the coroutine resumes holding it.
inline detail::queue_awaiter shared_mutex::lock_async() noexcept {
    return detail::queue_awaiter(&lock_or_queue, this, 0);
}
inline detail::queue_awaiter shared_mutex::lock_shared_async() noexcept {
    return detail::queue_awaiter(&lock_or_queue, this, 1);
}

inline detail::condition_awaiter
condition_variable::wait_async(std::unique_lock<fj::mutex>& lock) noexcept {
    return detail::condition_awaiter(*this, lock);
}

inline detail::queue_awaiter latch::wait_async() const noexcept {
    return detail::queue_awaiter(&open_or_queue, &m_protocol);
}

template <std::ptrdiff_t LeastMaxValue>
detail::queue_awaiter counting_semaphore<LeastMaxValue>::acquire_async() noexcept {
    return detail::queue_awaiter(&detail::semaphore_core::take_or_queue, &m_core);
}

template <class CompletionFunction>
detail::queue_awaiter barrier<CompletionFunction>::wait_async(arrival_token&& token) noexcept {
    return detail::queue_awaiter(&detail::barrier_core::completed_or_queue, &m_core, token.m_phase);
}
template <class CompletionFunction>
detail::queue_awaiter barrier<CompletionFunction>::arrive_and_wait_async() {
    return wait_async(arrive());
}

// The channel's awaiters: its value, or the slot a receiver fills, waits in the awaiter.
template <class T>
class channel<T>::send_awaiter : public detail::coroutine_waiter {
public:
    send_awaiter(channel& ch, T&& value) noexcept : m_channel(ch), m_value(std::move(value)) {}
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
        return !m_channel.send_or_queue(m_value, record) && suspend(h);
    }
    // Throws fj::channel_closed if the channel was closed before the value went.
    void await_resume() const {
        if (record.outcome == detail::wait_outcome::closed)
            detail::throw_channel_closed("send");
    }

private:
    channel& m_channel;
    T m_value;
};

template <class T>
class channel<T>::receive_awaiter : public detail::coroutine_waiter {
public:
    explicit receive_awaiter(channel& ch) noexcept : m_channel(ch) {}
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
        return !m_channel.receive_or_queue(m_result, record) && suspend(h);
    }
    // Empty once the channel is closed and drained.
    std::optional<T> await_resume() noexcept { return std::move(m_result); }

private:
    channel& m_channel;
    std::optional<T> m_result;
};

template <class T>
typename channel<T>::send_awaiter channel<T>::send_async(T value) noexcept {
    return send_awaiter(*this, std::move(value));
}

template <class T>
typename channel<T>::receive_awaiter channel<T>::receive_async() noexcept {
    return receive_awaiter(*this);
}

namespace detail {
// A sleep's record, which only the timer releases (runtime/src/sync/sync_wait.cpp); arg: the
// deadline's ticks.
bool arm_sleep(void*, std::uint64_t deadline, sync_waiter& w);
} // namespace detail

namespace this_task {

[[nodiscard]] inline detail::queue_awaiter
sleep_until_async(std::chrono::steady_clock::time_point deadline) noexcept {
    return detail::queue_awaiter(&detail::arm_sleep, nullptr,
                                 static_cast<std::uint64_t>(deadline.time_since_epoch().count()));
}
template <class Rep, class Period>
[[nodiscard]] detail::queue_awaiter
sleep_for_async(const std::chrono::duration<Rep, Period>& duration) {
    return sleep_until_async(std::chrono::steady_clock::now() +
                             std::chrono::ceil<std::chrono::steady_clock::duration>(duration));
}

} // namespace this_task
} // namespace fj
