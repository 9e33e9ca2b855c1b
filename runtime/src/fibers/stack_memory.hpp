// What a fiber stack's memory needs beyond mmap and munmap (stack_memory.cpp): the scan that
// tells stack trimming whether a page was written, and AddressSanitizer's shadow, which must be
// clean when a range is mapped and when it is unmapped.
#pragma once

#include <cstddef>

namespace fj::detail {

// True if some byte of [page, page + page_size) is not zero. page_size is a multiple of the
// guard registry's unit (k_guard_unit).
bool page_written(const void* page, std::size_t page_size) noexcept;

// Clears AddressSanitizer's shadow of [begin, begin + size), both page multiples; nothing in
// other builds.
void forget_poison(void* begin, std::size_t size, std::size_t page_size) noexcept;

} // namespace fj::detail
