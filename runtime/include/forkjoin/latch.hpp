// fj::latch: std::latch whose waiters are tasks, not threads. wait() and arrive_and_wait() park
// the calling task (its worker runs other work) until the count reaches zero; off the pool, and
// where a task may not park, they block the thread as std::latch's do. A count below zero (a
// negative expected count or count_down() past zero) throws std::invalid_argument. In a
// coroutine, with <forkjoin/sync_await.hpp>: co_await l.wait_async() (docs/coroutines.md).
// docs/sync.md; the protocol: docs/design/sync.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include <forkjoin/detail/latch_protocol.hpp>
#include <forkjoin/detail/sync_waiter.hpp>

namespace fj {

class latch {
public:
    static constexpr std::ptrdiff_t max() noexcept { return PTRDIFF_MAX; }

    explicit latch(std::ptrdiff_t expected);
    latch(const latch&) = delete;
    latch& operator=(const latch&) = delete;
    // Destroying one that a task or thread waits on is a bug: reported, then std::abort().
    ~latch();

    void count_down(std::ptrdiff_t n = 1);
    bool try_wait() const noexcept { return m_protocol.try_wait(); }
    void wait() const;
    void arrive_and_wait(std::ptrdiff_t n = 1);
    [[nodiscard]] detail::queue_awaiter wait_async() const noexcept; // <forkjoin/sync_await.hpp>

private:
    static bool open_or_queue(void* protocol, std::uint64_t, detail::sync_waiter& w);
    mutable detail::latch_protocol<> m_protocol; // wait() is const, as std::latch's
};

} // namespace fj
