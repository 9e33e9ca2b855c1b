// fj::barrier: std::barrier whose waiters are tasks, not threads. wait() and arrive_and_wait()
// park the calling task (its worker runs other work) until the phase completes; off the pool,
// and where a task may not park, they block the thread as std::barrier's do. The completion
// function runs once per phase, on the last task or thread to arrive, before any waiter of that
// phase resumes. Arriving with more than the phase has left, and an expected count out of
// [0, max()], throw std::invalid_argument. In a coroutine, with <forkjoin/sync_await.hpp>:
// co_await b.arrive_and_wait_async() or b.wait_async(token) (docs/coroutines.md). docs/sync.md; the
// protocol: docs/design/sync.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>

#include <forkjoin/detail/sync_waiter.hpp>

namespace fj {
namespace detail {

struct no_completion {
    void operator()() const noexcept {}
};

// What every barrier<F> shares, compiled once.
class barrier_core {
public:
    explicit barrier_core(std::ptrdiff_t expected);
    barrier_core(const barrier_core&) = delete;
    barrier_core& operator=(const barrier_core&) = delete;
    ~barrier_core();

    // Counts n arrivals (and, with `drop`, one participant less from the next phase on).
    // Returns the phase arrived at, and whether this arrival completed it: the caller then runs
    // the completion function and calls complete_phase().
    std::pair<std::uint64_t, bool> arrive(std::ptrdiff_t n, bool drop);
    void complete_phase() noexcept;
    void wait(std::uint64_t phase);
    // True if `phase` has completed; else queues w (the caller waits for its release).
    static bool completed_or_queue(void* core, std::uint64_t phase, sync_waiter& w);

private:
    std::mutex m_lock; // guards everything below
    std::ptrdiff_t m_expected;
    std::ptrdiff_t m_left;
    std::uint64_t m_phase = 0;
    waiter_queue m_waiters;
};

} // namespace detail

template <class CompletionFunction = detail::no_completion>
class barrier {
    static_assert(std::is_nothrow_invocable_v<CompletionFunction&>,
                  "a barrier's completion function is called as f() and must not throw");

public:
    class arrival_token {
        friend barrier;
        explicit arrival_token(std::uint64_t phase) noexcept : m_phase(phase) {}
        std::uint64_t m_phase;
    };

    static constexpr std::ptrdiff_t max() noexcept { return PTRDIFF_MAX; }

    explicit barrier(std::ptrdiff_t expected, CompletionFunction f = CompletionFunction())
        : m_core(expected), m_completion(std::move(f)) {}

    [[nodiscard]] arrival_token arrive(std::ptrdiff_t n = 1) {
        return arrival_token(arrive_counted(n, false));
    }
    void wait(arrival_token&& token) { m_core.wait(token.m_phase); }
    void arrive_and_wait() { m_core.wait(arrive_counted(1, false)); }
    void arrive_and_drop() { (void)arrive_counted(1, true); }

    // <forkjoin/sync_await.hpp>; arrive_and_wait_async() arrives when called.
    [[nodiscard]] detail::queue_awaiter wait_async(arrival_token&& token) noexcept;
    [[nodiscard]] detail::queue_awaiter arrive_and_wait_async();

private:
    std::uint64_t arrive_counted(std::ptrdiff_t n, bool drop) {
        const auto [phase, completed] = m_core.arrive(n, drop);
        if (completed) {
            m_completion();
            m_core.complete_phase();
        }
        return phase;
    }

    detail::barrier_core m_core;
    CompletionFunction m_completion;
};

} // namespace fj
