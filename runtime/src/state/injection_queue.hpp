// The global injection queue: a multi-producer FIFO for work that enters the pool from outside
// (scheduler::submit, and fork() called off the pool).
//
// Producers never lock: a push is one compare-and-swap on the tail (D. Vyukov's intrusive MPSC
// node-based queue, with a CAS in place of the exchange). Consumers (workers looking for work)
// serialise on a consumer flag, which makes the single-consumer algorithm safe for many; they only
// try it when the queue looks non-empty, and a consumer that finds it taken looks elsewhere
// instead of queueing behind it (try_pop() may return nullptr then; empty() waits for it).
//
// Closing: bit 0 of the tail word is the scheduler's "closed" flag. Because it lives in the same
// atomic that every push modifies, a push and the close are ordered by that word's modification
// order: a push either lands before the close (and its item is in the queue, visible to the
// workers' termination check) or sees the bit and is refused. No separate gate or counter of
// in-flight submitters is needed (docs/design/shutdown.md).
//
// Order: items are linked in the order of their CASes on the tail, so the queue is FIFO, and items
// from one producer are taken in the order that producer pushed them.
//
// Invariant: the items are the nodes reachable from m_head (excluding m_stub) by `m_next` links,
//            plus at most one node per producer that has swung the tail but not yet linked
//            itself (the "inconsistent" window). The stub may sit in the middle of the list
//            (after a re-insertion raced with a producer), so "tail == stub" alone does NOT mean
//            empty: see empty_hint().
#pragma once

#include <atomic>
#include <cstdint>

#include <forkjoin/detail/atomics.hpp>

namespace fj::detail {

// Node must have a member `m_next` of type Atomics::atomic<Node*> (std::atomic<Node*> in the
// runtime) and be at least 2-byte aligned. Atomics: std_atomics in the runtime; the model test
// passes Relacy's (forkjoin/detail/atomics.hpp).
template <class Node, class Atomics = std_atomics>
class injection_queue {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    enum class push_result { pushed, closed };

    injection_queue() = default;
    injection_queue(const injection_queue&) = delete;
    injection_queue& operator=(const injection_queue&) = delete;

    // Appends n unless the queue is closed. With `even_if_closed`, appends regardless (for work
    // created by the pool's own tasks while it drains).
    push_result push(Node* n, bool even_if_closed = false) noexcept {
        n->m_next.store(nullptr, std::memory_order_relaxed);
        std::uintptr_t tail = m_tail.load(std::memory_order_relaxed);
        do {
            if ((tail & k_closed) != 0 && !even_if_closed)
                return push_result::closed;
            // seq_cst: orders the publication before the producer's check for sleeping workers
            // (the sleep protocol's Dekker pair, docs/design/sleep.md), and a push before or
            // after the close in one order; acq_rel would do for the queue itself.
        } while (!m_tail.compare_exchange_weak(tail, address(n) | (tail & k_closed),
                                               std::memory_order_seq_cst,
                                               std::memory_order_relaxed));
        // release: pairs with the consumer's acquire load of `next`; publishes *n.
        node_at(tail)->m_next.store(n, std::memory_order_release);
        return push_result::pushed;
    }

    // Refuses every later push() without even_if_closed. Items already pushed stay.
    void close() noexcept { m_tail.fetch_or(k_closed, std::memory_order_seq_cst); }
    bool is_closed() const noexcept {
        return (m_tail.load(std::memory_order_seq_cst) & k_closed) != 0;
    }

    // Any thread; takes the oldest item, or nullptr if the queue is empty or its oldest item is in
    // the middle of being linked by a producer (the caller looks elsewhere and comes back).
    Node* try_pop() {
        if (empty_hint())
            return nullptr;
        consumer_guard consumer(m_consumer_busy);
        if (!consumer.owns())
            return nullptr; // another thread is taking an item: look elsewhere, come back
        Node* head = m_head.load(std::memory_order_relaxed); // we are its only writer now
        // acquire: pairs with the release store of `next` in push(); the node's content is visible.
        Node* next = head->m_next.load(std::memory_order_acquire);
        if (head == &m_stub) {
            if (next == nullptr)
                return nullptr; // empty, or the first node is not linked yet
            set_head(next);
            head = next;
            next = next->m_next.load(std::memory_order_acquire);
        }
        if (next != nullptr) {
            set_head(next);
            // The next consumer reads `next` (its link, and the task lives in the same block):
            // start that cache miss now so it overlaps with running `head`. In a backlog the
            // queue is a pointer chase through memory the producer wrote long ago.
            __builtin_prefetch(next, 1);
            return head;
        }
        // `head` is the last linked node. If a producer has already swung the tail past it, its
        // link is about to appear: report nothing for now rather than spin here.
        if (head != node_at(m_tail.load(std::memory_order_acquire)))
            return nullptr;
        // Re-insert the stub behind `head` so `head` can be handed out and the queue stays linked.
        push(&m_stub, true);
        next = head->m_next.load(std::memory_order_acquire);
        if (next != nullptr) {
            set_head(next);
            return head;
        }
        return nullptr; // another producer got between; its node follows `head` shortly
    }

    // Any thread; a cheap hint for try_pop(). Exact when no consumer is inside try_pop(); while
    // one is, it may briefly report empty although an item is present (the consumer may be
    // re-inserting the stub behind the item it is about to hand out), so never sleep or stop on
    // it: use empty() for that.
    bool empty_hint() const noexcept {
        // acquire: pairs with set_head(); the others as in empty().
        return m_head.load(std::memory_order_acquire) == &m_stub &&
               m_stub.m_next.load(std::memory_order_seq_cst) == nullptr &&
               node_at(m_tail.load(std::memory_order_seq_cst)) == &m_stub;
    }

    // Any thread; exact. True only if no item was present at the moment of the check: with the
    // consumer flag held nothing can leave the queue, and a producer can only add (an item whose
    // producer has swung the tail but not linked it yet counts as present). For the sleep and
    // termination re-checks (docs/design/sleep.md): its seq_cst load of the tail follows the
    // sleeper's seq_cst prewait, pairing with the producer's seq_cst CAS.
    bool empty() const {
        const consumer_guard consumer(m_consumer_busy, consumer_guard::wait);
        return m_head.load(std::memory_order_relaxed) == &m_stub &&
               m_stub.m_next.load(std::memory_order_seq_cst) == nullptr &&
               node_at(m_tail.load(std::memory_order_seq_cst)) == &m_stub;
    }

private:
    // The consumer flag: a load and one exchange to take it, a plain release store to give it back
    // (a pthread mutex costs a second locked instruction to unlock, on every task taken). acquire
    // on taking / release on giving back: the critical sections are ordered, so the next consumer
    // sees m_head and the stub's link as the last one left them.
    class consumer_guard {
    public:
        static constexpr struct wait_t {
        } wait{};
        // Test, then test-and-set: a consumer that finds the flag taken goes elsewhere without an
        // RMW, so workers polling a busy queue read a shared line instead of taking it from the
        // holder in turn. relaxed: the load only decides whether to try; the exchange orders.
        explicit consumer_guard(atomic<bool>& busy) noexcept
            : m_busy(busy), m_owns(!busy.load(std::memory_order_relaxed) &&
                                   !busy.exchange(true, std::memory_order_acquire)) {}
        consumer_guard(atomic<bool>& busy, wait_t) noexcept : m_busy(busy), m_owns(true) {
            unsigned spins = 0;
            while (busy.exchange(true, std::memory_order_acquire))
                while (busy.load(std::memory_order_relaxed)) { // spin on a load, not on the RMW
                    // The holder's critical section is a few loads and stores; if it takes
                    // longer, the holder was preempted: let it run instead of burning its core.
                    // Through Atomics, so that the model checker runs the holder meanwhile.
                    if (++spins < 64)
                        Atomics::cpu_relax();
                    else
                        Atomics::yield_thread();
                }
        }
        consumer_guard(const consumer_guard&) = delete;
        consumer_guard& operator=(const consumer_guard&) = delete;
        ~consumer_guard() {
            if (m_owns)
                m_busy.store(false, std::memory_order_release);
        }
        bool owns() const noexcept { return m_owns; }

    private:
        atomic<bool>& m_busy;
        bool m_owns;
    };

    static constexpr std::uintptr_t k_closed = 1;
    static std::uintptr_t address(Node* n) noexcept { return reinterpret_cast<std::uintptr_t>(n); }
    static Node* node_at(std::uintptr_t word) noexcept {
        return reinterpret_cast<Node*>(word & ~k_closed);
    }

    // Written by the consumer-flag holder; read without it only by empty_hint(). release: a hint
    // reader that sees the new head sees the links that led to it.
    void set_head(Node* n) noexcept { m_head.store(n, std::memory_order_release); }

    Node m_stub{};
    atomic<std::uintptr_t> m_tail{address(&m_stub)};
    // The flag and the head on lines of their own (128 bytes: the adjacent-line prefetcher pairs
    // 64-byte lines): every worker's empty_hint() reads m_head, and every consumer's exchange
    // writes the flag, so on one line the hint readers would pull the flag's line away from its
    // holder, and each exchange would invalidate every reader's copy of the head.
    alignas(128) mutable atomic<bool> m_consumer_busy{false};
    // Written only by the thread holding m_consumer_busy.
    alignas(128) atomic<Node*> m_head{&m_stub};
};

} // namespace fj::detail
