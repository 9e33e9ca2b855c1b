// Memory for fork tasks and their future states, so that neither a fork nor a submit pays for
// malloc/free.
//
// Each worker has a block_cache, and so does every other thread that submits or frees tasks
// (outside_cache(), created on first use). A cache keeps a free list per size class (64, 128, 256
// and 512 bytes). Blocks move between threads in batches through one process-wide central pool:
// a cache that grows past k_max_cached_per_class spills k_batch blocks to it, and an empty cache
// refills from it, so a block allocated by one thread and freed by another (a task submitted from
// main and finished on a worker) comes back without touching malloc, at the cost of one mutex
// acquisition per k_batch blocks. The central pool keeps 256 batches per class for good; a burst
// beyond that (10^6 live futures) is kept too, so the next burst reuses it instead of paying
// malloc and fresh pages, and each excess batch goes back to ::operator delete once it has been
// unused for k_decay (on the next spill, or by a worker going to sleep), so a burst does not pin
// memory for ever.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>

namespace fj::detail {

struct free_block {
    free_block* next;
};

class block_cache {
public:
    static constexpr std::size_t k_class_count = 4; // 64, 128, 256, 512 bytes
    static constexpr std::uint32_t k_batch = 256;   // blocks moved per central-pool transfer
    static constexpr std::uint32_t k_max_cached_per_class = 4 * k_batch;
    // Batches per class the central pool keeps for good (beyond them, excess decays: see above).
    static constexpr std::size_t k_central_resident_batches = 256;
    // How long an excess batch may sit unused in the central pool before it is freed: jemalloc's
    // default decay for dirty pages. Long enough that a program bursting every few seconds reuses
    // its memory; 3 s (the first value) returned it between rounds 3.5-4 s apart, and each burst
    // then paid malloc and fresh pages again: 177 ns per task instead of 55
    // (docs/performance.md#tiny-tasks).
    static constexpr std::chrono::seconds k_decay{10};

    block_cache() noexcept = default;
    block_cache(const block_cache&) = delete;
    block_cache& operator=(const block_cache&) = delete;
    ~block_cache() { flush(); }

    // Returns the size class for `size` bytes, or k_class_count if it is too big to cache.
    static constexpr std::size_t class_of(std::size_t size) noexcept {
        for (std::size_t c = 0; c < k_class_count; ++c)
            if (size <= class_size(c))
                return c;
        return k_class_count;
    }
    static constexpr std::size_t class_size(std::size_t c) noexcept { return std::size_t{64} << c; }

    void* allocate(std::size_t c) {
        if (m_free[c] == nullptr && !refill(c))
            return ::operator new(class_size(c));
        free_block* b = m_free[c];
        m_free[c] = b->next;
        --m_count[c];
        return b;
    }

    // As allocate(), and starts fetching the block the next call will return, for writing: in
    // a burst of submits from outside the pool, the blocks come back from other threads and
    // each would be a cache miss on the submitting thread; this overlaps one with the current
    // task's set-up. (Not on a worker's fork path: its blocks are hot, and fork costs count.)
    void* allocate_for_burst(std::size_t c) {
        void* b = allocate(c);
        if (m_free[c] != nullptr)
            __builtin_prefetch(m_free[c], 1);
        return b;
    }

    void deallocate(void* p, std::size_t c) noexcept {
        m_free[c] = ::new (p) free_block{m_free[c]};
        if (++m_count[c] > k_max_cached_per_class)
            spill(c);
    }

private:
    bool refill(std::size_t c) noexcept; // takes a batch from the central pool
    void spill(std::size_t c) noexcept;  // gives k_batch blocks to the central pool
    void flush() noexcept;               // gives everything back (at thread/worker exit)

    std::array<free_block*, k_class_count> m_free{};
    std::array<std::uint32_t, k_class_count> m_count{};
};

// The calling thread's cache when it is not a worker: created on first use, destroyed (and
// flushed) at thread exit. Null once it has been destroyed (a future freed during static
// destruction, after the main thread's thread_locals), and the caller then uses the heap.
block_cache* outside_cache() noexcept;

// The central pool's decay (see above). release_idle_blocks(false) frees the excess batches unused
// for k_decay, (true) all excess now; idle_blocks_pending() says whether any excess is left (a
// relaxed hint). central_pool_blocks(c) counts the blocks of class c pooled (for tests).
void release_idle_blocks(bool all) noexcept;
bool idle_blocks_pending() noexcept;
std::size_t central_pool_blocks(std::size_t c);

} // namespace fj::detail
