// The stacks of parking's fibers (parking_lot.hpp) and a slot's first one, taken before its
// thread starts (parking.hpp, prepare_thread_stack), a lot's deletion, and the default cap on
// parked tasks.
#include "parking/parking_lot.hpp"

#include "parking/parking.hpp"

#include <fstream>
#include <new>
#include <utility>

namespace fj::detail {

using stack_context = boost::context::stack_context;

namespace {

// The sanitizer record of a fiber sits at the top of its stack, below the bytes the pool keeps
// there and above the context that make_context() places there.
constexpr std::size_t k_info_space =
    (sizeof(fiber_info) + stack_pool::k_reserved_top + 63) & ~std::size_t{63};

// A fresh loop fiber's stack comes from the calling worker's cache over the pool's stack pool,
// and goes back into the cache of whichever worker of the pool it ends on (fibers are created and
// end only on the pool's workers; a worker's first one's stack is taken for it, from its cache,
// before its thread starts).
stack_cache& cache_of(parking_lot& lot) noexcept {
    return lot.per_worker[current_worker()->m_index].stacks;
}

// Takes a stack from `cache` and puts its sanitizer record at its top. Throws std::bad_alloc.
fiber_info* take_from(parking_lot& lot, stack_cache& cache) {
    stack_context sc = cache.allocate(lot.stacks);
    auto* info = ::new (static_cast<char*>(sc.sp) - k_info_space) fiber_info{};
    init_sanitizer_context(*info, static_cast<char*>(sc.sp) - sc.size, sc.size - k_info_space,
                           stack_pool::mapping_tsan_fiber(sc));
    return info;
}

// The stack whose record is `info` goes back to `cache`; its fiber has ended (or never began).
void release_to(parking_lot& lot, stack_cache& cache, fiber_info* info) noexcept {
    destroy_sanitizer_context(*info);
    info->~fiber_info();
    stack_context sc;
    sc.sp = reinterpret_cast<char*>(info) + k_info_space;
    sc.size = lot.stacks.stack_size();
    cache.deallocate(lot.stacks, sc);
}

} // namespace

fiber_info* take_stack(parking_lot& lot) {
    return take_from(lot, cache_of(lot));
}

void release_stack(parking_lot& lot, fiber_info* info) noexcept {
    release_to(lot, cache_of(lot), info);
}

// Taken from and given back to the slot's own cache by a thread that is not the slot's: before
// its thread starts, or once it failed to, so no other thread touches that cache meanwhile.
std::size_t prepare_thread_stack(pool& p, std::size_t index) noexcept {
    // Its start-up, the loop's last end and its leaving use a few KiB of it.
    constexpr std::size_t k_loop_fiber_thread_stack = std::size_t{256} << 10;
    if (p.m_parking != nullptr) {
        fiber_worker& fw = p.m_parking->per_worker[index];
        try {
            fw.first_loop_stack = take_from(*p.m_parking, fw.stacks);
            return k_loop_fiber_thread_stack;
        } catch (const std::bad_alloc&) { // the thread tries again, and else runs tasks itself
        }
    }
    return p.m_options.worker_stack_size;
}

void give_back_first_loop_stack(pool& p, std::size_t index) noexcept {
    if (p.m_parking == nullptr)
        return;
    fiber_worker& fw = p.m_parking->per_worker[index];
    if (fiber_info* info = std::exchange(fw.first_loop_stack, nullptr))
        release_to(*p.m_parking, fw.stacks, info);
}

void parking_lot_deleter::operator()(parking_lot* lot) const noexcept {
    delete lot;
}

std::size_t default_parking_cap() {
    // Each parked task holds a guarded stack: two memory maps. Use at most three quarters of the
    // process's map count for them, the rest is for everything else (the heap, libraries). If
    // several schedulers together run out, a failed mmap makes a wait help instead.
    std::size_t max_map_count = 65530;
    std::ifstream in("/proc/sys/vm/max_map_count");
    if (in)
        in >> max_map_count;
    const std::size_t cap = max_map_count / 2 * 3 / 4;
    return cap < 64 ? 64 : cap;
}

} // namespace fj::detail
