// The operations of the sleep word (forkjoin/detail/sleep_word.hpp declares them; the inline fork
// path needs only any_of(), defined there). docs/design/sleep.md has the protocol: the steps
// of sleeping and waking, and the searchers (#searching).
#pragma once

#include <forkjoin/detail/sleep_word.hpp>

namespace fj::detail {

// seq_cst: the sleeper's half of the Dekker pair with any_of() (docs/design/sleep.md).
template <class A>
typename basic_sleep_word<A>::key basic_sleep_word<A>::prepare_wait() noexcept {
    return m_state.fetch_add(k_one_waiter, std::memory_order_seq_cst);
}

// Leaves the count without sleeping. When every thread still counted holds a ticket (tickets ==
// waiters), leaving without one would strand a ticket with nobody to take it, so the caller takes
// one and is woken: returns true. seq_cst: a taken ticket is a wake-up's consumption, acquiring
// from the ticket's release sequence (every write of the word is an RMW).
template <class A>
bool basic_sleep_word<A>::cancel_wait() noexcept {
    key v = m_state.load(std::memory_order_relaxed);
    for (;;) {
        const bool take = tickets_of(v) != 0 && tickets_of(v) == waiters_of(v);
        const key next = v - k_one_waiter - (take ? k_one_ticket : 0);
        if (m_state.compare_exchange_weak(v, next, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return take;
    }
}

// A counted thread takes a ticket if one is there, and so leaves the count woken. seq_cst: as
// cancel_wait().
template <class A>
bool basic_sleep_word<A>::try_take_ticket() noexcept {
    key v = m_state.load(std::memory_order_relaxed);
    while (tickets_of(v) != 0)
        if (m_state.compare_exchange_weak(v, v - k_one_waiter - k_one_ticket,
                                          std::memory_order_seq_cst, std::memory_order_relaxed))
            return true;
    return false;
}

// Gives one counted thread a ticket unless every counted thread has one. Returns whether it gave
// one (the caller then signals a blocked thread). seq_cst: release for the work published before
// it, to the thread that takes the ticket.
template <class A>
bool basic_sleep_word<A>::give_ticket() noexcept {
    key v = m_state.load(std::memory_order_relaxed);
    while (tickets_of(v) < waiters_of(v))
        if (m_state.compare_exchange_weak(v, v + k_one_ticket, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return true;
    return false;
}

// A pool's wake-up (docs/design/sleep.md#searching): gives a counted thread a ticket and with it
// a searching place, only when nobody searches (no searcher and no ticket on its way: tickets <=
// searching). Returns whether it gave one. seq_cst: as give_ticket(); when it gives none, the load
// it decided by follows the caller's fence, the pusher's half of the fence pair with go_idle().
template <class A>
bool basic_sleep_word<A>::give_ticket_unless_searching() noexcept {
    key v = m_state.load(std::memory_order_seq_cst);
    while (searching_of(v) == 0 && waiters_of(v) != 0)
        if (m_state.compare_exchange_weak(v, v + k_one_ticket + k_one_searcher,
                                          std::memory_order_seq_cst, std::memory_order_seq_cst))
            return true;
    return false;
}

// Gives every counted thread a ticket (a pool's: with a searching place each). Returns how many it
// gave. seq_cst: as give_ticket().
template <class A>
std::uint32_t basic_sleep_word<A>::give_all_tickets(bool with_searching) noexcept {
    key v = m_state.load(std::memory_order_relaxed);
    for (;;) {
        const key more = waiters_of(v) - tickets_of(v);
        if (more == 0)
            return 0;
        const key next = v + more * k_one_ticket + (with_searching ? more * k_one_searcher : 0);
        if (m_state.compare_exchange_weak(v, next, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return static_cast<std::uint32_t>(more);
    }
}

// A worker starts searching when fewer than half of the awake workers already do (Go's and
// Tokio's cap); `workers` is the pool's size. Returns whether it did. seq_cst: one modification
// order with the pushers' reads of the word (what orders a searcher's re-check after a push is the
// fence pair, docs/design/sleep.md#searching).
template <class A>
bool basic_sleep_word<A>::try_start_searching(std::uint32_t workers) noexcept {
    key v = m_state.load(std::memory_order_relaxed);
    for (;;) {
        const std::uint64_t awake = workers > waiters_of(v) ? workers - waiters_of(v) : 1;
        if (2 * std::uint64_t{searching_of(v)} >= awake)
            return false;
        if (m_state.compare_exchange_weak(v, v + k_one_searcher, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return true;
    }
}

// A searcher stops searching. Returns the word as it was. seq_cst: as try_start_searching().
template <class A>
typename basic_sleep_word<A>::key basic_sleep_word<A>::stop_searching() noexcept {
    return m_state.fetch_sub(k_one_searcher, std::memory_order_seq_cst);
}

// How many threads are between prepare_wait() and leaving. relaxed: a hint for how many workers
// are awake (docs/design/crowded.md), which may be stale either way at no risk.
template <class A>
std::uint32_t basic_sleep_word<A>::waiters() const noexcept {
    return waiters_of(m_state.load(std::memory_order_relaxed));
}

// How many workers search. relaxed: a hint, as waiters().
template <class A>
std::uint32_t basic_sleep_word<A>::searching() const noexcept {
    return searching_of(m_state.load(std::memory_order_relaxed));
}

} // namespace fj::detail
