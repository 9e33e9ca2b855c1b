#include "platform/process_generation.hpp"

#include <atomic>

namespace fj::detail {

namespace {
// relaxed: written only in the child's fork handler, while the child has a single thread.
std::atomic<std::uint64_t> g_generation{0};
} // namespace

std::uint64_t process_generation() noexcept {
    return g_generation.load(std::memory_order_relaxed);
}

void advance_process_generation() noexcept {
    g_generation.fetch_add(1, std::memory_order_relaxed);
}

} // namespace fj::detail
