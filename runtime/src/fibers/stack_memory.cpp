// What a fiber stack's memory needs beyond mmap and munmap (stack_memory.hpp).
#include "fibers/stack_memory.hpp"

#include "fibers/guard_registry.hpp"

#include <cstdint>
#include <cstring>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define FJ_STACK_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FJ_STACK_POOL_ASAN 1
#endif
#endif
#ifndef FJ_STACK_POOL_ASAN
#define FJ_STACK_POOL_ASAN 0
#endif

#if FJ_STACK_POOL_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace fj::detail {

namespace {

// page_written compares a page with zeros this many bytes at a time: every page size the pool
// accepts is a multiple of it (the constructor checks the registry's unit). Unused under ASan,
// whose page_written is a word loop.
[[maybe_unused]] constexpr std::size_t k_scan_chunk = k_guard_unit;

} // namespace

// True if some byte of [page, page + page_size) is not zero. glibc's memcmp is vectorised: about
// 60 ns for 4 KiB here, against about 300 ns for a word loop at -O2. Under AddressSanitizer it is
// intercepted and checks the shadow of what it reads; this page is dead stack memory, whose
// shadow the runtime keeps clean but code it does not control (a longjmp past frames, a foreign
// fiber library) may not, so there, an uninstrumented loop. (Unused with FJ_VALGRIND.)
#if FJ_STACK_POOL_ASAN
__attribute__((no_sanitize_address)) bool page_written(const void* page,
                                                       std::size_t page_size) noexcept {
    const auto* const begin = static_cast<const std::uint64_t*>(page);
    const auto* const end = begin + page_size / sizeof(std::uint64_t);
    for (const auto* w = begin; w != end; ++w)
        if (*w != 0)
            return true;
    return false;
}
#else
bool page_written(const void* page, std::size_t page_size) noexcept {
    alignas(64) static const unsigned char zeros[k_scan_chunk] = {};
    const auto* const begin = static_cast<const unsigned char*>(page);
    for (std::size_t offset = 0; offset < page_size; offset += k_scan_chunk)
        if (std::memcmp(begin + offset, zeros, k_scan_chunk) != 0)
            return true;
    return false;
}
#endif

// AddressSanitizer keeps its shadow of memory across munmap and mmap: redzones left poisoned in a
// range (a frame that never returned, by anyone: this pool, another library's fibers) would
// reappear at other offsets of whatever is mapped there next, as false stack-buffer-overflow
// reports (docs/design/fiber-switches.md). So a stack is mapped clean and unmapped clean.
// __asan_unpoison_memory_region writes the shadow (8 MiB for a 64 MiB stack: about 25 ms and 8
// MiB resident per stack), so the whole shadow pages in the middle are dropped with madvise
// instead, as ASan does for its own large ranges (they read back as zeros: unpoisoned), and only
// the edges are written. `begin` and `size` are page multiples.
void forget_poison([[maybe_unused]] void* begin, [[maybe_unused]] std::size_t size,
                   [[maybe_unused]] std::size_t page_size) noexcept {
#if FJ_STACK_POOL_ASAN
    std::size_t scale = 0;
    std::size_t offset = 0;
    __asan_get_shadow_mapping(&scale, &offset);
    const auto b = reinterpret_cast<std::uintptr_t>(begin);
    const std::uintptr_t e = b + size;
    const std::uintptr_t per_shadow_page = std::uintptr_t{page_size} << scale;
    const std::uintptr_t mid_b = (b + per_shadow_page - 1) / per_shadow_page * per_shadow_page;
    const std::uintptr_t mid_e = e / per_shadow_page * per_shadow_page;
    if (mid_b >= mid_e) {
        __asan_unpoison_memory_region(begin, size);
        return;
    }
    __asan_unpoison_memory_region(begin, mid_b - b);
    __asan_unpoison_memory_region(reinterpret_cast<void*>(mid_e), e - mid_e);
    (void)::madvise(reinterpret_cast<void*>((mid_b >> scale) + offset), (mid_e - mid_b) >> scale,
                    MADV_DONTNEED);
#endif
}

} // namespace fj::detail
