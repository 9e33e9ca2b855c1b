// fj::counting_semaphore and fj::binary_semaphore: std's semaphores whose waiters are tasks, not
// threads. acquire() parks the calling task (its worker runs other work) until a token is free;
// off the pool, and where a task may not park, it blocks the thread as std's does. Tokens go to
// waiters in arrival order: while anyone waits, release() hands its tokens to the oldest
// waiters and try_acquire() fails. A count out of [0, max()] (in the constructor, or by
// release()) throws std::invalid_argument. In a coroutine, with
// <forkjoin/sync_await.hpp>: co_await s.acquire_async() (docs/coroutines.md). docs/sync.md; the
// protocol: docs/design/sync.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <forkjoin/detail/semaphore_protocol.hpp>
#include <forkjoin/detail/sync_waiter.hpp>

namespace fj {
namespace detail {

// What every counting_semaphore<N> shares, compiled once.
class semaphore_core {
public:
    semaphore_core(std::ptrdiff_t desired, std::ptrdiff_t max);
    semaphore_core(const semaphore_core&) = delete;
    semaphore_core& operator=(const semaphore_core&) = delete;
    ~semaphore_core();

    void release(std::ptrdiff_t n);
    void acquire();
    bool try_acquire() noexcept { return m_protocol.try_acquire(); }
    bool acquire_until(std::chrono::steady_clock::time_point deadline);
    static bool take_or_queue(void* core, std::uint64_t, sync_waiter& w);

private:
    semaphore_protocol<> m_protocol;
    const std::ptrdiff_t m_max;
};

} // namespace detail

template <std::ptrdiff_t LeastMaxValue = PTRDIFF_MAX>
class counting_semaphore {
    static_assert(LeastMaxValue >= 0, "a semaphore's maximum is not negative");

public:
    static constexpr std::ptrdiff_t max() noexcept { return LeastMaxValue; }

    explicit counting_semaphore(std::ptrdiff_t desired) : m_core(desired, LeastMaxValue) {}

    void release(std::ptrdiff_t update = 1) { m_core.release(update); }
    void acquire() { m_core.acquire(); }
    bool try_acquire() noexcept { return m_core.try_acquire(); }
    [[nodiscard]] detail::queue_awaiter acquire_async() noexcept; // <forkjoin/sync_await.hpp>

    template <class Rep, class Period>
    bool try_acquire_for(const std::chrono::duration<Rep, Period>& timeout) {
        return try_acquire() ||
               m_core.acquire_until(
                   std::chrono::steady_clock::now() +
                   std::chrono::ceil<std::chrono::steady_clock::duration>(timeout));
    }

    template <class Clock, class Duration>
    bool try_acquire_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        return try_acquire() ||
               m_core.acquire_until(
                   std::chrono::steady_clock::now() +
                   std::chrono::ceil<std::chrono::steady_clock::duration>(deadline - Clock::now()));
    }

private:
    detail::semaphore_core m_core;
};

using binary_semaphore = counting_semaphore<1>;

} // namespace fj
