// Fiber stacks, pooled, so that parking a waiting task on a fiber does
// not pay for mmap/mprotect/munmap each time.
//
// Why large reservations: real fork/join recursions are deep (the UTS T3L tree has depth 17,844
// and needs about 2.8 MiB of stack when it runs serially), and a task parked on a fiber may run
// such a recursion. So each stack is one MAP_NORESERVE reservation of 64 MiB by default: only the
// pages a fiber touches cost memory, and reserving address space is free on 64-bit.
//
// Why pooled and never unmapped in steady state: each guarded stack is 2 VMAs (the PROT_NONE guard
// and the usable part), and vm.max_map_count (65530 by default) caps a process's VMAs, so creating
// and destroying mappings at task rate would be slow (syscalls, TLB shootdowns on munmap) and a
// burst could exhaust the map count. Stacks are mapped on demand, kept, and unmapped only when the
// pool is destroyed. A deep burst does not pin memory for ever: when a stack that went further
// than trim_above_bytes from its top comes back, the part below that line is given back with
// madvise(MADV_DONTNEED) (how the depth is detected cheaply: stack_pool::trim in stack_pool.cpp).
//
// Layout of one stack (one mmap, lowest address first):
//
//     [ guard: guard_size() bytes, PROT_NONE ][ usable: stack_size() bytes, read/write ]
//     ^ base                                   ^ sp - size                               ^ sp (top)
//
// stack_context::sp is the top (highest address, stacks grow down) and stack_context::size the
// usable size, excluding the guard. While a stack is free, its last pointer-sized word (just below
// sp) links it into the pool's free list, so the pool never allocates on a return. The word below
// that holds the stack's own TSan fiber (mapping_tsan_fiber) from its mapping to its unmapping.
// The top k_reserved_top bytes are the pool's: whatever runs on a stack starts below them.
//
// Guard pages of every pool are listed in one process-wide registry that a SIGSEGV handler can
// read without locks (address_in_stack_guard, guard_registry.hpp), to tell a stack overflow from
// other faults.
#pragma once

#include "fibers/guard_registry.hpp" // each stack's guard is registered there

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <boost/context/stack_context.hpp>

namespace fj::detail {

class stack_cache;

// The stacks of one scheduler. allocate() and deallocate() are thread-safe, and a stack may be
// returned by a thread other than the one that took it (fibers migrate between workers).
// Destroy the pool only after every stack has come back: it unmaps the pooled stacks; stacks still
// handed out (live) are left mapped (leaked), since a fiber might still be running on one.
class stack_pool {
public:
    static constexpr std::size_t k_default_stack_size = std::size_t{64} << 20;  // 64 MiB
    static constexpr std::size_t k_default_trim_above = std::size_t{256} << 10; // 256 KiB
    // PROT_NONE bytes below each stack (rounded up to the page size). More than a page so that a
    // frame of up to 64 KiB that jumps over the guard's start (code compiled without
    // -fstack-clash-protection) still faults in the guard instead of writing into a neighbour.
    static constexpr std::size_t k_guard_bytes = std::size_t{64} << 10;
    // Bytes at the top of each stack that the pool keeps for itself (the layout above).
    static constexpr std::size_t k_reserved_top = 32;

    // stack_size: usable bytes per stack, rounded up to the page size (at least one page).
    // trim_above_bytes: when a stack that was used further than this from its top comes back,
    // the part below is released with madvise(MADV_DONTNEED); rounded up to the page size (at
    // least one page: the top page holds the free-list link). trim_above_bytes >= stack_size
    // disables trimming (then a return costs no page scan either).
    // Throws std::invalid_argument if stack_size plus the guard overflows std::size_t.
    explicit stack_pool(std::size_t stack_size = k_default_stack_size,
                        std::size_t trim_above_bytes = k_default_trim_above);
    stack_pool(const stack_pool&) = delete;
    stack_pool& operator=(const stack_pool&) = delete;
    ~stack_pool();

    // A pooled stack, or a newly mapped one. Throws std::bad_alloc (leaking nothing) if a new
    // mapping is needed and mmap or mprotect fails (address space, vm.max_map_count), so that a
    // caller can fall back, e.g. to blocking the thread instead of parking a fiber.
    boost::context::stack_context allocate();
    // Returns a stack that allocate() (or a stack_cache on this pool) handed out; sctx is reset.
    void deallocate(boost::context::stack_context& sctx) noexcept;

    // The TSan fiber that this stack keeps for its life (create_mapping_tsan_fiber(),
    // fiber_switch.hpp), or null where there is none.
    static void* mapping_tsan_fiber(const boost::context::stack_context& sctx) noexcept {
        return tsan_fiber_slot(sctx.sp);
    }

    std::size_t stack_size() const noexcept { return m_stack_size; } // usable bytes per stack
    std::size_t guard_size() const noexcept { return m_guard_size; }
    std::size_t trim_above() const noexcept { return m_trim_above; } // == stack_size(): no trim

    // Statistics. live: handed out (by the pool or by a stack_cache) and not yet returned.
    // peak_live: the maximum of live so far. mapped: stacks mapped (they are unmapped only by the
    // destructor). pooled: in the pool's free list (stacks in caches are neither live nor pooled).
    std::size_t live() const noexcept;
    std::size_t peak_live() const noexcept;
    std::size_t mapped() const noexcept;
    std::size_t pooled() const;

private:
    friend class stack_cache;

    struct mapping {
        std::uintptr_t base;  // the lowest address (the guard's start)
        std::uint32_t slot;   // index in the guard registry, or k_no_guard_slot
        unsigned valgrind_id; // 0 unless built with FJ_VALGRIND
    };

    // The word below the free-list link: the stack's TSan fiber (the layout above).
    static void*& tsan_fiber_slot(void* top) noexcept { return static_cast<void**>(top)[-2]; }
    void* map_stack();                    // a new stack's top; throws std::bad_alloc
    void unmap_stack(void* top) noexcept; // destructor only
    void trim(void* top) const noexcept;  // madvise below trim_above if used there
    std::size_t take(void** tops, std::size_t n) noexcept; // pops up to n pooled stacks
    void give(void* const* tops, std::size_t n) noexcept;  // pushes n stacks
    void note_handed_out() noexcept;
    void note_returned() noexcept;
    boost::context::stack_context context_of(void* top) const noexcept;

    std::size_t m_page_size;
    std::size_t m_stack_size;
    std::size_t m_guard_size;
    std::size_t m_trim_above;

    mutable std::mutex m_mutex;
    void* m_free = nullptr;          // top of the first free stack; guarded by m_mutex
    std::size_t m_pooled = 0;        // length of m_free; guarded by m_mutex
    std::vector<mapping> m_mappings; // every stack mapped; guarded by m_mutex

    std::atomic<std::size_t> m_live{0};
    std::atomic<std::size_t> m_peak_live{0};
    std::atomic<std::size_t> m_mapped{0};
};

// A per-worker cache of up to k_capacity stacks in front of a stack_pool: a hit is a few loads and
// stores, no lock. An empty cache refills k_batch stacks from the pool under one lock acquisition
// (or maps one stack if the pool is empty); a full one spills its k_batch least recently used
// stacks. Not thread-safe: one owner (a worker) uses it. Returns on a thread other than the
// allocating one are fine: the stack goes into the returning thread's cache. A cache serves one
// pool at a time (passing another pool first flushes the cache into the previous one); it must be
// destroyed or flushed before its pool is destroyed. The destructor flushes.
class stack_cache {
public:
    static constexpr std::size_t k_capacity = 8;
    static constexpr std::size_t k_batch = k_capacity / 2;

    stack_cache() noexcept = default;
    stack_cache(const stack_cache&) = delete;
    stack_cache& operator=(const stack_cache&) = delete;
    ~stack_cache() { flush(); }

    // As stack_pool::allocate / deallocate (the same exceptions, counters and trimming).
    boost::context::stack_context allocate(stack_pool& pool);
    void deallocate(stack_pool& pool, boost::context::stack_context& sctx) noexcept;

    // Gives every cached stack back to the pool it came from.
    void flush() noexcept;
    std::size_t size() const noexcept { return m_count; }

private:
    void switch_to(stack_pool& pool) noexcept;

    stack_pool* m_pool = nullptr;
    std::array<void*, k_capacity> m_tops{}; // stack tops; [m_count - 1] is the most recent
    std::size_t m_count = 0;
};

} // namespace fj::detail
