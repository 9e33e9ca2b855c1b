// fj::latch: std::latch whose waiters are tasks, not threads. wait() and arrive_and_wait() park
// the calling task (its worker runs other work) until the count reaches zero; off the pool, and
// where a task may not park, they block the thread as std::latch's do. A count below zero (a
// negative expected count or count_down() past zero) throws std::invalid_argument.
// docs/sync.md; the protocol: docs/design/sync.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

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
    // acquire: pairs with the count_down() calls' release.
    bool try_wait() const noexcept { return m_count.load(std::memory_order_acquire) == 0; }
    void wait() const;
    void arrive_and_wait(std::ptrdiff_t n = 1);

private:
    std::atomic<std::ptrdiff_t> m_count;
    mutable std::mutex m_lock; // guards m_waiters
    mutable detail::waiter_queue m_waiters;
};

} // namespace fj
