// The state word of an event count (runtime/src/state/event_count.hpp) and of a pool's wake
// policy (docs/design/sleep.md): how many threads are preparing to sleep or asleep (waiters), the
// wake-ups given to them and not yet taken (tickets), and the workers searching for work. It lives
// in the public part of a pool because the inline fork path asks "is anyone asleep?" after every
// push: one seq_cst load. The other operations are defined in runtime/src/state/sleep_word_ops.hpp,
// with their memory orders; the blocking half is in runtime/src too.
#pragma once

#include "atomics.hpp"

#include <atomic>
#include <cstdint>

namespace fj::detail {

// Invariants: waiters == threads between prepare_wait() and leaving; tickets <= waiters; in a pool,
// tickets <= searching (docs/design/sleep.md#searching). Atomics: as atomics.hpp.
template <class Atomics = std_atomics>
class basic_sleep_word {
public:
    using key = std::uint64_t; // a value of the word
    key prepare_wait() noexcept;
    bool cancel_wait() noexcept;
    bool try_take_ticket() noexcept;
    bool give_ticket() noexcept;
    bool give_ticket_unless_searching() noexcept;
    std::uint32_t give_all_tickets(bool with_searching) noexcept;
    bool try_start_searching(std::uint32_t workers) noexcept;
    key stop_searching() noexcept;
    std::uint32_t waiters() const noexcept;
    std::uint32_t searching() const noexcept;
    static std::uint32_t waiters_of(key k) noexcept { return std::uint32_t(k & k_field_mask); }
    static std::uint32_t searching_of(key k) noexcept {
        return std::uint32_t(k >> 21 & k_field_mask);
    }
    static std::uint32_t tickets_of(key k) noexcept {
        return std::uint32_t(k >> 42 & k_field_mask);
    }

    // Whether one of `fields` (k_waiters, k_searchers) is not zero. seq_cst: the pusher's load half
    // of the Dekker pair with prepare_wait() (docs/design/sleep.md).
    bool any_of(std::uint64_t fields) const noexcept {
        return (m_state.load(std::memory_order_seq_cst) & fields) != 0;
    }
    bool has_waiters() const noexcept { return any_of(k_waiters); }
    static constexpr std::uint64_t k_waiters = (std::uint64_t{1} << 21) - 1;
    static constexpr std::uint64_t k_searchers = k_waiters << 21;

private:
    static constexpr std::uint64_t k_field_mask = (std::uint64_t{1} << 21) - 1; // 21-bit fields
    static constexpr std::uint64_t k_one_waiter = 1;
    static constexpr std::uint64_t k_one_searcher = std::uint64_t{1} << 21;
    static constexpr std::uint64_t k_one_ticket = std::uint64_t{1} << 42;

    typename Atomics::template atomic<std::uint64_t> m_state{0}; // waiters, searching, tickets
};

using sleep_word = basic_sleep_word<>;

} // namespace fj::detail
