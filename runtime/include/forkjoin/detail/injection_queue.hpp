// The global injection queue: a multi-producer FIFO for work that enters the pool from outside
// (scheduler::submit, and fork() called off the pool).
//
// Producers never lock: a push is one exchange on the tail (D. Vyukov's intrusive MPSC node-based
// queue). Consumers (workers looking for work) serialise on a mutex, which makes the single-consumer
// algorithm safe for many; they only take it when the queue looks non-empty.
//
// Order: items are linked in the order of the exchanges on m_tail, so items from one producer are
// taken in the order that producer pushed them, and the queue as a whole is FIFO.
//
// Invariant: the items are the nodes reachable from m_head (excluding m_stub) by `m_next` links,
//            plus at most one node per producer that has exchanged m_tail but not yet linked
//            itself (the "inconsistent" window). m_tail == &m_stub  <=>  the queue is empty.
#pragma once

#include <atomic>
#include <mutex>

namespace fj::detail {

// Node must have a member `std::atomic<Node*> m_next`.
template <class Node>
class injection_queue {
public:
    injection_queue() = default;
    injection_queue(const injection_queue&) = delete;
    injection_queue& operator=(const injection_queue&) = delete;

    void push(Node* n) noexcept { link(n); }

    // Any thread; takes the oldest item, or nullptr if the queue is empty or its oldest item is in
    // the middle of being linked by a producer (the caller looks elsewhere and comes back).
    Node* try_pop() {
        if (empty_hint()) return nullptr;
        std::lock_guard lock(m_consumer);
        Node* head = m_head;
        // acquire: pairs with the release store of `next` in link(); the node's content is visible.
        Node* next = head->m_next.load(std::memory_order_acquire);
        if (head == &m_stub) {
            if (next == nullptr) return nullptr; // empty, or the first node is not linked yet
            m_head = next;
            head = next;
            next = next->m_next.load(std::memory_order_acquire);
        }
        if (next != nullptr) {
            m_head = next;
            return head;
        }
        // `head` is the last linked node. If a producer has already exchanged the tail past it,
        // its link is about to appear: report nothing for now rather than spin here.
        if (head != m_tail.load(std::memory_order_acquire)) return nullptr;
        // Re-insert the stub behind `head` so `head` can be handed out and the queue stays linked.
        link(&m_stub);
        next = head->m_next.load(std::memory_order_acquire);
        if (next != nullptr) {
            m_head = next;
            return head;
        }
        return nullptr; // another producer got between; its node follows `head` shortly
    }

    // Any thread. False only if the queue held no item at the moment of the load; an item whose
    // producer is still linking it counts as present, so a worker never sleeps on it.
    // seq_cst: the consumer's re-check in the sleep protocol (docs/design.md#sleep).
    bool empty_hint() const noexcept { return m_tail.load(std::memory_order_seq_cst) == &m_stub; }

private:
    void link(Node* n) noexcept {
        n->m_next.store(nullptr, std::memory_order_relaxed);
        // seq_cst: orders the publication before the producer's check for sleeping workers (the
        // sleep protocol's Dekker pair); acq_rel would do for the queue itself.
        Node* prev = m_tail.exchange(n, std::memory_order_seq_cst);
        // release: pairs with the consumer's acquire load of `next`; publishes *n.
        prev->m_next.store(n, std::memory_order_release);
    }

    Node m_stub{};
    std::atomic<Node*> m_tail{&m_stub};
    alignas(128) std::mutex m_consumer;
    Node* m_head{&m_stub}; // guarded by m_consumer
};

} // namespace fj::detail
