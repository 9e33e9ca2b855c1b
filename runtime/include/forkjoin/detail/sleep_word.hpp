// The state word of a pool's event count (runtime/src/state/event_count.hpp): how many threads are
// preparing to sleep or asleep, and the wake-up epoch. It lives in the public part of a pool
// because the inline fork path asks "is anyone asleep?" after every push: one seq_cst load. The
// mutex and condition variable that sleepers block on stay in runtime/src.
//
// Invariant: waiters() == number of threads between prepare_wait() and the end of
//            cancel_wait()/leave(); the epoch only grows (modulo 2^32).
#pragma once

#include "atomics.hpp"

#include <atomic>
#include <cstdint>

namespace fj::detail {

// Atomics: std_atomics in the runtime; the model test passes Relacy's (atomics.hpp).
template <class Atomics = std_atomics>
class basic_sleep_word {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    using key = std::uint64_t;

    // seq_cst: the sleeper's half of the Dekker pair with has_waiters() (docs/design/sleep.md).
    key prepare_wait() noexcept {
        return m_state.fetch_add(k_one_waiter, std::memory_order_seq_cst);
    }

    // relaxed: leaving changes nothing anyone waits for; a notify that saw us wasted one bump.
    void cancel_wait() noexcept { m_state.fetch_sub(k_one_waiter, std::memory_order_relaxed); }

    // True when some thread is between prepare_wait() and leaving. seq_cst: the producer's load
    // half of the Dekker pair; it must follow the producer's seq_cst publication of work.
    bool has_waiters() const noexcept {
        return (m_state.load(std::memory_order_seq_cst) & k_waiter_mask) != 0;
    }

    // How many threads are between prepare_wait() and leaving. relaxed: a hint for how many
    // workers are awake (docs/design/crowded.md), which may be stale either way at no risk.
    std::uint32_t waiters() const noexcept {
        return static_cast<std::uint32_t>(m_state.load(std::memory_order_relaxed) & k_waiter_mask);
    }
    // acq_rel: the bump is what a sleeper's acquire load in epoch() observes.
    void bump_epoch() noexcept { m_state.fetch_add(k_one_epoch, std::memory_order_acq_rel); }

    // acquire: pairs with bump_epoch().
    std::uint32_t epoch() const noexcept {
        return static_cast<std::uint32_t>(m_state.load(std::memory_order_acquire) >> k_epoch_shift);
    }
    static std::uint32_t epoch_of(key k) noexcept {
        return static_cast<std::uint32_t>(k >> k_epoch_shift);
    }
    // How many threads were counted when the prepare_wait() that returned `k` counted its caller:
    // with one or more, the caller needs no heavy barrier of its own (docs/design/sleep.md).
    static std::uint32_t waiters_of(key k) noexcept {
        return static_cast<std::uint32_t>(k & k_waiter_mask);
    }

private:
    static constexpr int k_epoch_shift = 32;
    static constexpr std::uint64_t k_one_waiter = 1;
    static constexpr std::uint64_t k_one_epoch = std::uint64_t{1} << k_epoch_shift;
    static constexpr std::uint64_t k_waiter_mask = k_one_epoch - 1;

    atomic<std::uint64_t> m_state{0}; // low 32 bits: waiters; high 32 bits: epoch
};

using sleep_word = basic_sleep_word<>;

} // namespace fj::detail
