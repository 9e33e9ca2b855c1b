// A growable Chase–Lev work-stealing deque of pointers.
//
// Ownership: exactly one thread (the owning worker) calls push() and pop(); any thread may call
// steal(). The owner works at the *front* (called "bottom" in the papers): it pushes and pops the
// newest item (LIFO). Thieves take the *back* ("top"): the oldest item (FIFO), which in fork/join
// code is the biggest piece of remaining work.
//
// References:
//   D. Chase, Y. Lev. "Dynamic Circular Work-Stealing Deque". SPAA 2005.
//   N. M. Lê, A. Pop, A. Cohen, F. Zappa Nardelli. "Correct and Efficient Work-Stealing for Weak
//   Memory Models". PPoPP 2013. (The orderings below follow its C11 version, with one change.)
//
// Change from Lê et al.: the paper uses standalone seq_cst fences in pop() and steal(). g++ 12's
// ThreadSanitizer does not model atomic_thread_fence, so the same StoreLoad edges are written as
// seq_cst operations on `m_bottom` / `m_top` themselves (a seq_cst store followed by a seq_cst load
// of another variable is ordered by the single total order S). On x86-64 this compiles to the same
// one locked instruction per pop as the fence version.
//
// Invariant: top <= bottom + 1 at all times, and the live items are exactly the slots
//            [top, bottom) of the current ring; bottom - top <= capacity after every push.
//            Each pushed item is returned by exactly one pop() or steal().
//
// Growth: push() never fails. When the ring is full the owner copies the live items into a ring of
// twice the size and publishes it. A thief may still be reading the old ring, so retired rings are
// kept until the deque is destroyed (no thief can run then). Their total size is below the current
// ring's size, so this at most doubles the memory, and only after a deep burst.
#pragma once

#include "atomics.hpp"
#include "fault_injection.hpp"

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace fj::detail {

enum class steal_result { success, empty, lost_race };

// Atomics: std_atomics in the runtime; the model test passes Relacy's (atomics.hpp).
template <class T, class Atomics = std_atomics>
requires std::is_pointer_v<T>
class chase_lev_deque {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    explicit chase_lev_deque(std::size_t initial_capacity = 256)
        : m_ring(new ring(round_up_pow2(initial_capacity < 2 ? 2 : initial_capacity), nullptr)) {}

    chase_lev_deque(const chase_lev_deque&) = delete;
    chase_lev_deque& operator=(const chase_lev_deque&) = delete;

    ~chase_lev_deque() {
        ring* r = m_ring.load(std::memory_order_relaxed);
        while (r != nullptr) {
            ring* older = r->retired;
            delete r;
            r = older;
        }
    }

    // Owner only. Makes `item` visible to thieves.
    void push(T item) { push_with(item, std::memory_order_release); }

    // Owner only. As push(), but the publishing store is seq_cst: stronger than the deque needs,
    // it makes the push one half of a Dekker pair with a sleeping worker's seq_cst prewait, so
    // the caller's following seq_cst load of the sleeper count cannot miss a worker that went to
    // sleep without seeing this item (docs/design/sleep.md). Used where the cheaper asymmetric
    // barrier (asymmetric_barrier.hpp) is unavailable, and in ThreadSanitizer builds.
    void push_seq_cst(T item) { push_with(item, std::memory_order_seq_cst); }

    // Owner only. Takes the newest item, or returns nullptr when the deque is empty.
    T pop() {
        const std::int64_t b = m_bottom.load(std::memory_order_relaxed) - 1;
        ring* r = m_ring.load(std::memory_order_relaxed);
        // seq_cst store then seq_cst load of top: the StoreLoad edge of Lê et al.'s fence. Either
        // a racing thief sees the lowered bottom, or we see its incremented top.
        m_bottom.store(b, std::memory_order_seq_cst);
        std::int64_t t = m_top.load(std::memory_order_seq_cst);
        if (t > b) { // empty: restore bottom (nobody else writes it)
            m_bottom.store(b + 1, std::memory_order_relaxed);
            return nullptr;
        }
        T item = r->get(b);
        if (t == b) {
            // Last item: a thief may be taking it. The CAS on top decides who wins.
            // seq_cst: participates in S with the thieves' CAS on the same variable.
            if (!m_top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                               std::memory_order_relaxed))
                item = nullptr; // a thief won
            m_bottom.store(b + 1, std::memory_order_relaxed);
        }
        return item;
    }

    // Owner only. True if the deque is certainly empty, without pop()'s fence: only the owner
    // moves bottom and top never goes down, so once top >= bottom the deque stays empty until
    // the owner's next push. relaxed: a stale (smaller) top only answers "maybe not". For a
    // worker looking for work (idle, or fed from the injection queue), which would otherwise
    // pay pop()'s locked instruction at every look; fork/join's own pops skip it (their deque
    // is rarely empty).
    bool owner_sees_empty() const noexcept {
        return m_top.load(std::memory_order_relaxed) >= m_bottom.load(std::memory_order_relaxed);
    }

    // Any thread. Takes the oldest item into `out`.
    steal_result steal(T& out) {
        // seq_cst load of top, then seq_cst load of bottom: Lê et al.'s fence between the two
        // loads, pairing with the seq_cst store of bottom in pop().
        std::int64_t t = m_top.load(std::memory_order_seq_cst);
        // seq_cst (includes acquire): pairs with push()'s store so the slot's content is visible.
        const std::int64_t b = m_bottom.load(std::memory_order_seq_cst);
        if (t >= b)
            return steal_result::empty;
        // acquire: pairs with the release store in grow(); a ring at least as new as the bottom
        // we read holds slot t (an older ring still holds it too: grow() copies, never clears).
        ring* r = m_ring.load(std::memory_order_acquire);
        T item = r->get(t);
        // seq_cst: decides the race with other thieves and with pop() of the last item.
        if (!m_top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                           std::memory_order_relaxed))
            return steal_result::lost_race;
        out = item;
        return steal_result::success;
    }

    // Any thread; a snapshot that may be stale by the time it returns.
    std::size_t size_hint() const noexcept {
        const std::int64_t b = m_bottom.load(std::memory_order_seq_cst);
        const std::int64_t t = m_top.load(std::memory_order_seq_cst);
        return b > t ? static_cast<std::size_t>(b - t) : 0;
    }
    bool empty_hint() const noexcept { return size_hint() == 0; }

    std::size_t capacity() const noexcept {
        return static_cast<std::size_t>(m_ring.load(std::memory_order_relaxed)->mask + 1);
    }

private:
    void push_with(T item, std::memory_order publish) {
        const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
        // acquire: pairs with the CAS on top in steal()/pop() so the slot a thief took is free.
        const std::int64_t t = m_top.load(std::memory_order_acquire);
        ring* r = m_ring.load(std::memory_order_relaxed); // only the owner writes m_ring
        if (b - t > r->mask)
            r = grow(r, b, t);
        r->put(b, item);
        // release (or seq_cst, see push_seq_cst): publishes the slot to the thief that reads this
        // bottom with its seq_cst (acquiring) load in steal().
        if (publish == std::memory_order_seq_cst)
            m_bottom.store(b + 1, std::memory_order_seq_cst);
        else
            m_bottom.store(b + 1, std::memory_order_release);
    }

    struct ring {
        ring(std::int64_t capacity, ring* older)
            : mask(capacity - 1), slots(new atomic<T>[static_cast<std::size_t>(capacity)]),
              retired(older) {}
        // Slots are atomics so a thief reading a slot the owner is rewriting is not a data race;
        // relaxed suffices because bottom/ring publication carries the ordering. i & mask is in
        // [0, capacity) for any i, negative included, so the index cast is exact.
        T get(std::int64_t i) const noexcept {
            return slots[static_cast<std::size_t>(i & mask)].load(std::memory_order_relaxed);
        }
        void put(std::int64_t i, T v) noexcept {
            slots[static_cast<std::size_t>(i & mask)].store(v, std::memory_order_relaxed);
        }

        std::int64_t mask;
        std::unique_ptr<atomic<T>[]> slots;
        ring* retired; // the ring this one replaced; freed with the deque
    };

    static std::int64_t round_up_pow2(std::size_t n) {
        std::size_t p = 1;
        while (p < n)
            p <<= 1;
        return static_cast<std::int64_t>(p);
    }

    ring* grow(ring* old, std::int64_t b, std::int64_t t) {
        fault_injection::check(fault_injection::site::deque_growth);
        ring* bigger = new ring((old->mask + 1) * 2, old);
        for (std::int64_t i = t; i < b; ++i)
            bigger->put(i, old->get(i));
        // release: pairs with the acquire load in steal(); the copied slots are visible first.
        m_ring.store(bigger, std::memory_order_release);
        return bigger;
    }

    // Thieves hammer top, the owner bottom: keep them on separate cache lines.
    alignas(128) atomic<std::int64_t> m_top{0};
    alignas(128) atomic<std::int64_t> m_bottom{0};
    alignas(128) atomic<ring*> m_ring;
};

} // namespace fj::detail
