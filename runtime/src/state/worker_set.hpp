// A pool's workers: each at a stable address for the pool's lifetime, in slots allocated once.
// The count only grows, and may grow while the pool runs (spares: rescue/; callers' slots:
// callers/): whoever adds a worker builds it first and then publishes the new count, so a reader
// that sees count n sees workers 0..n-1 complete.
//
// Invariant: slots [0, size()) hold fully built workers; nothing is ever removed before the pool
// is destroyed (after its threads have been joined).
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
        : m_slots(std::make_unique<std::unique_ptr<worker>[]>(capacity)), m_capacity(capacity) {}

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
        return *m_slots[n];
    }

    std::size_t size() const noexcept { return m_size.load(std::memory_order_acquire); }
    std::size_t capacity() const noexcept { return m_capacity; }
    // Precondition: i < a size() the caller has read.
    worker& operator[](std::size_t i) const noexcept { return *m_slots[i]; }

private:
    std::unique_ptr<std::unique_ptr<worker>[]> m_slots;
    std::size_t m_capacity;
    std::atomic<std::size_t> m_size{0};
    std::mutex m_add_mutex;
};

} // namespace fj::detail
