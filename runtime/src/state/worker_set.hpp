// A pool's workers: each at a stable address for the pool's lifetime, in slots allocated once.
// The count only grows, and may grow while the pool runs (spares: rescue/; callers' slots:
// callers/): whoever adds a worker builds it first and then publishes the new count, so a reader
// that sees count n sees workers 0..n-1 complete.
//
// Invariant: slots [0, size()) hold fully built workers; nothing is ever removed before the pool
// is destroyed (after its threads have been joined).
//
// A slot whose spare has retired is vacant until a later spare takes it: its deque and resumable
// slot are empty, and only a thread serving the slot fills them. Looks for work visit the slots
// [0, scan_end()), one past the highest slot not vacant, so a pool whose burst of spares has
// retired scans what it scanned before the burst.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <memory>
#include <mutex>

#include <forkjoin/detail/worker.hpp>

namespace fj::detail {

class worker_set {
public:
    explicit worker_set(std::size_t capacity)
        : m_slots(std::make_unique<std::unique_ptr<worker>[]>(capacity)),
          m_vacant(std::make_unique<bool[]>(capacity)), m_capacity(capacity) {}

    // Adds the worker make(index) returns at index size(), or nothing if make throws (which
    // add() passes on). Adds are serialised here (the rescue's spares and the callers' slots
    // grow the set from different threads), and make runs under that lock, so a worker is built
    // with the index it is stored at. Precondition: size() < capacity() (the slots never move,
    // so a reader may index them while a worker is added).
    template <class Make>
    worker& add(Make&& make) {
        std::lock_guard lock(m_add_mutex);
        // relaxed: only add() writes the count, under the lock.
        const std::size_t n = m_size.load(std::memory_order_relaxed);
        assert(n < m_capacity);
        m_slots[n] = make(n);
        // release: pairs with size()'s acquire; the worker is built before it can be chosen.
        m_size.store(n + 1, std::memory_order_release);
        m_scan_end.store(n + 1, std::memory_order_release); // the new slot is the highest
        return *m_slots[n];
    }

    // Slot i's spare has retired (its deque and resumable slot are empty): looks may skip it.
    void vacate(std::size_t i) noexcept {
        std::lock_guard lock(m_add_mutex);
        m_vacant[i] = true;
        std::size_t end = m_scan_end.load(std::memory_order_relaxed);
        while (end > 0 && m_vacant[end - 1])
            --end;
        // release: this thread holds the lock every add() released, so a look that reads this
        // end (acquire) sees the workers below it built. One that reads the old end probes a few
        // empty slots more.
        m_scan_end.store(end, std::memory_order_release);
    }
    // Slot i (vacant, built) is about to be served again, before its thread starts.
    void occupy(std::size_t i) noexcept {
        std::lock_guard lock(m_add_mutex);
        m_vacant[i] = false;
        // release, and before the thread that serves the slot starts: every push that thread
        // makes happens after this store, so a look that sees the push (the sleep protocol's
        // fence pairs, docs/design/sleep.md) sees the slot in range too.
        if (m_scan_end.load(std::memory_order_relaxed) <= i)
            m_scan_end.store(i + 1, std::memory_order_release);
    }
    // One past the highest slot not vacant: where looks for work stop. At most size().
    std::size_t scan_end() const noexcept {
        // acquire: pairs with the release of add(), vacate() and occupy(); the slots below are
        // built.
        return m_scan_end.load(std::memory_order_acquire);
    }

    std::size_t size() const noexcept { return m_size.load(std::memory_order_acquire); }
    std::size_t capacity() const noexcept { return m_capacity; }
    // Precondition: i < a size() the caller has read.
    worker& operator[](std::size_t i) const noexcept { return *m_slots[i]; }

private:
    std::unique_ptr<std::unique_ptr<worker>[]> m_slots;
    std::unique_ptr<bool[]> m_vacant; // guarded by m_add_mutex
    std::size_t m_capacity;
    std::atomic<std::size_t> m_size{0};
    std::atomic<std::size_t> m_scan_end{0};
    std::mutex m_add_mutex;
};

} // namespace fj::detail
