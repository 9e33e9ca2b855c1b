// Fiber stacks: mapping, the free list, trimming, and the per-worker cache (see stack_pool.hpp).
// Each stack's guard is registered in guard_registry.cpp; what a stack's memory needs beyond
// mmap (the written-page scan, AddressSanitizer's shadow) is in stack_memory.cpp.
#include "fibers/stack_pool.hpp"

#include "fibers/fiber_switch.hpp"
#include "fibers/stack_memory.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <sys/mman.h>
#include <unistd.h>

#if defined(FJ_VALGRIND) && defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define FJ_STACK_POOL_VALGRIND 1
#endif
#endif
#ifndef FJ_STACK_POOL_VALGRIND
#define FJ_STACK_POOL_VALGRIND 0
#endif

namespace fj::detail {
namespace {

// --- Helpers -------------------------------------------------------------------------------------

std::size_t page_size() noexcept {
    static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

// Rounds n (> 0) up to a multiple of the power of two `unit`; the caller rules out overflow.
std::size_t round_up(std::size_t n, std::size_t unit) noexcept {
    return (n + unit - 1) & ~(unit - 1);
}

void*& link_of(void* top) noexcept {
    return static_cast<void**>(top)[-1];
}

} // namespace

// --- stack_pool ----------------------------------------------------------------------------------

stack_pool::stack_pool(std::size_t stack_size, std::size_t trim_above_bytes)
    : m_page_size(page_size()) {
    // The registry encodes guards in 4 KiB units and needs page-aligned bases.
    if (m_page_size % k_guard_unit != 0)
        throw std::invalid_argument("fj::stack_pool: the page size is not a multiple of 4096");
    m_guard_size = round_up(k_guard_bytes, m_page_size);
    if (m_guard_size / k_guard_unit > k_guard_max_units)
        throw std::invalid_argument("fj::stack_pool: the page size is too large for the guard");
    const std::size_t max_size =
        std::numeric_limits<std::size_t>::max() - m_guard_size - m_page_size;
    if (stack_size > max_size)
        throw std::invalid_argument("fj::stack_pool: stack size too large");
    m_stack_size = round_up(std::max<std::size_t>(stack_size, 1), m_page_size);
    m_trim_above = trim_above_bytes >= m_stack_size
                       ? m_stack_size
                       : round_up(std::max<std::size_t>(trim_above_bytes, 1), m_page_size);
}

stack_pool::~stack_pool() {
    // Only pooled stacks are unmapped: a live one may still have a fiber on it. No lock: nothing
    // may use the pool any more. Sorted so that unmap_stack finds each mapping by binary search.
    std::sort(m_mappings.begin(), m_mappings.end(),
              [](const mapping& a, const mapping& b) { return a.base < b.base; });
    while (m_free != nullptr) {
        void* const top = m_free;
        m_free = link_of(top);
        unmap_stack(top);
    }
}

boost::context::stack_context stack_pool::allocate() {
    void* top = nullptr;
    take(&top, 1);
    if (top == nullptr)
        top = map_stack();
    note_handed_out();
    return context_of(top);
}

void stack_pool::deallocate(boost::context::stack_context& sctx) noexcept {
    assert(sctx.sp != nullptr && sctx.size == m_stack_size);
    void* const top = sctx.sp;
    sctx = boost::context::stack_context{};
    trim(top);
    give(&top, 1);
    note_returned();
}

std::size_t stack_pool::live() const noexcept {
    // relaxed: a statistic; it publishes nothing, and its own modification order is total.
    return m_live.load(std::memory_order_relaxed);
}

std::size_t stack_pool::peak_live() const noexcept {
    // relaxed: a statistic (see live()).
    return m_peak_live.load(std::memory_order_relaxed);
}

std::size_t stack_pool::mapped() const noexcept {
    // relaxed: a statistic (see live()).
    return m_mapped.load(std::memory_order_relaxed);
}

std::size_t stack_pool::pooled() const {
    std::lock_guard lock(m_mutex);
    return m_pooled;
}

void* stack_pool::map_stack() {
    const std::size_t total = m_guard_size + m_stack_size;
    void* const p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    char* const base = static_cast<char*>(p);
#ifdef MADV_NOHUGEPAGE
    // Where transparent huge pages are "always", the first touch of the top would otherwise fault
    // in a 2 MiB page per stack. Advisory: failure changes only the memory cost. Done before the
    // mprotect, so the mapping still splits into exactly 2 VMAs.
    (void)::madvise(base, total, MADV_NOHUGEPAGE);
#endif
    if (::mprotect(base, m_guard_size, PROT_NONE) != 0) { // ENOMEM: vm.max_map_count reached
        ::munmap(base, total);
        throw std::bad_alloc();
    }
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    mapping m{b, register_stack_guard(b, m_guard_size), 0};
#if FJ_STACK_POOL_VALGRIND
    m.valgrind_id = VALGRIND_STACK_REGISTER(base + m_guard_size, base + total);
#endif
    try {
        std::lock_guard lock(m_mutex);
        m_mappings.push_back(m);
    } catch (...) {
#if FJ_STACK_POOL_VALGRIND
        VALGRIND_STACK_DEREGISTER(m.valgrind_id);
#endif
        unregister_stack_guard(m.slot);
        ::munmap(base, total);
        throw std::bad_alloc();
    }
    // relaxed: a statistic (see live()).
    m_mapped.fetch_add(1, std::memory_order_relaxed);
    forget_poison(base + m_guard_size, m_stack_size, m_page_size);
    char* const top = base + total;
    if constexpr (k_tsan_fiber_per_mapping) // elsewhere the slot keeps mmap's zero (null)
        tsan_fiber_slot(top) = create_mapping_tsan_fiber();
    return top;
}

void stack_pool::unmap_stack(void* top) noexcept {
    const std::size_t total = m_guard_size + m_stack_size;
    const auto base = reinterpret_cast<std::uintptr_t>(top) - total;
    const auto it = std::lower_bound(m_mappings.begin(), m_mappings.end(), base,
                                     [](const mapping& m, std::uintptr_t b) { return m.base < b; });
    if (it != m_mappings.end() && it->base == base) {
#if FJ_STACK_POOL_VALGRIND
        VALGRIND_STACK_DEREGISTER(it->valgrind_id);
#endif
        unregister_stack_guard(it->slot); // before the munmap: the range may be reused right after
    }
    if constexpr (k_tsan_fiber_per_mapping)
        destroy_mapping_tsan_fiber(tsan_fiber_slot(top));
    forget_poison(reinterpret_cast<char*>(base) + m_guard_size, m_stack_size, m_page_size);
    ::munmap(reinterpret_cast<void*>(base), total);
    // relaxed: a statistic (see live()).
    m_mapped.fetch_sub(1, std::memory_order_relaxed);
}

// Releases the pages further than m_trim_above from the top, if the stack went that deep.
//
// How it knows, measured on Linux 6.18 (x86-64), 64 MiB stacks, 256 KiB trim line:
//   - always madvise(MADV_DONTNEED) the region below the line: about 400 ns per return even when
//     nothing is there (the kernel walks the empty page tables), and 1.3-1.8 us with two threads
//     returning at once (mmap_lock traffic), where a pool allocate+deallocate without trimming
//     takes about 28 ns;
//   - mincore() of the page just below the line first: about 530 ns (it allocates a kernel page
//     per call), so worse than always trimming;
//   - (chosen) read the page just below the line and madvise only if some word of it is not zero.
//     A fiber that went past the line wrote frames (return addresses, saved registers) into that
//     page; a trimmed or never-touched page reads as zeros. Reading an untouched page maps the
//     shared zero page (no memory, one fault after each trim, then free), and the scan costs about
//     60 ns (a pool allocate+deallocate about 100 ns in all). It misses a stack that went deeper
//     while writing only zeros to that page, or with one frame of more than a page that spans it
//     unwritten: those deep pages then stay resident until a later return does see the page
//     written. Valgrind builds (FJ_VALGRIND) always madvise: memcheck considers the memory below a
//     finished fiber's stack pointer undefined.
// Stacks are pooled for reuse, so their pages above the line stay resident and the next fiber
// faults nothing in there.
void stack_pool::trim(void* top) const noexcept {
    if (m_trim_above >= m_stack_size)
        return;
    char* const line = static_cast<char*>(top) - m_trim_above;
#if !FJ_STACK_POOL_VALGRIND
    if (!page_written(line - m_page_size, m_page_size))
        return;
#endif
    char* const low = static_cast<char*>(top) - m_stack_size;
    (void)::madvise(low, static_cast<std::size_t>(line - low), MADV_DONTNEED); // advisory
}

std::size_t stack_pool::take(void** tops, std::size_t n) noexcept {
    std::lock_guard lock(m_mutex);
    std::size_t i = 0;
    for (; i < n && m_free != nullptr; ++i) {
        tops[i] = m_free;
        m_free = link_of(m_free);
    }
    m_pooled -= i;
    return i;
}

void stack_pool::give(void* const* tops, std::size_t n) noexcept {
    if (n == 0)
        return;
    // Chain them outside the lock: the stacks belong to the caller until they are spliced in.
    for (std::size_t i = 0; i + 1 < n; ++i)
        link_of(tops[i]) = tops[i + 1];
    std::lock_guard lock(m_mutex);
    link_of(tops[n - 1]) = m_free;
    m_free = tops[0];
    m_pooled += n;
}

void stack_pool::note_handed_out() noexcept {
    // relaxed: statistics (see live()); the stack itself is handed over by m_mutex or by the
    // owning cache, not by these counters. The peak is a CAS maximum, so it never goes down.
    const std::size_t now = m_live.fetch_add(1, std::memory_order_relaxed) + 1;
    std::size_t peak = m_peak_live.load(std::memory_order_relaxed);
    while (now > peak && !m_peak_live.compare_exchange_weak(peak, now, std::memory_order_relaxed))
        ;
}

void stack_pool::note_returned() noexcept {
    // relaxed: a statistic (see note_handed_out()).
    m_live.fetch_sub(1, std::memory_order_relaxed);
}

boost::context::stack_context stack_pool::context_of(void* top) const noexcept {
    boost::context::stack_context sctx;
    sctx.size = m_stack_size;
    sctx.sp = top;
    return sctx;
}

// --- stack_cache ---------------------------------------------------------------------------------

void stack_cache::switch_to(stack_pool& pool) noexcept {
    if (m_pool != &pool) {
        flush();
        m_pool = &pool;
    }
}

boost::context::stack_context stack_cache::allocate(stack_pool& pool) {
    switch_to(pool);
    void* top;
    if (m_count == 0) {
        m_count = pool.take(m_tops.data(), k_batch);
        // The pool hands out its most recently returned stack first; keep that one on top here.
        std::reverse(m_tops.begin(), m_tops.begin() + static_cast<std::ptrdiff_t>(m_count));
    }
    if (m_count == 0)
        top = pool.map_stack(); // throws std::bad_alloc with the cache unchanged
    else
        top = m_tops[--m_count];
    pool.note_handed_out();
    return pool.context_of(top);
}

void stack_cache::deallocate(stack_pool& pool, boost::context::stack_context& sctx) noexcept {
    assert(sctx.sp != nullptr && sctx.size == pool.m_stack_size);
    switch_to(pool);
    void* const top = sctx.sp;
    sctx = boost::context::stack_context{};
    pool.trim(top);
    if (m_count == k_capacity) {
        // Spill the least recently used (the bottom of the array); the hot ones stay.
        pool.give(m_tops.data(), k_batch);
        std::copy(m_tops.begin() + k_batch, m_tops.end(), m_tops.begin());
        m_count -= k_batch;
    }
    m_tops[m_count++] = top;
    pool.note_returned();
}

void stack_cache::flush() noexcept {
    if (m_count != 0)
        m_pool->give(m_tops.data(), m_count);
    m_count = 0;
}

} // namespace fj::detail
