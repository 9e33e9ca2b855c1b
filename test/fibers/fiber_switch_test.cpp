// The stack-switch primitives every fiber of the runtime goes through
// (runtime/src/fibers/fiber_switch.hpp) and what they promise the sanitizers
// (docs/design/fiber-switches.md):
//   - contexts started, switched between at different call depths through functions the compiler
//     keeps out of line, and ended, any number of times: ThreadSanitizer's per-fiber shadow call
//     stacks stay balanced (an unbalanced one crashes TSan inside its stack depot within a few
//     thousand switches, which is how the runtime's fibers failed at -O2 before);
//   - a context that ends leaves no poisoned byte on its stack (AddressSanitizer): the frames that
//     never return (the entry function's) are cleared, so a reused stack shows no stale redzone to
//     differently shaped frames;
//   - a stack is mapped clean and unmapped clean, whatever was left poisoned in its range.
// The poison checks need AddressSanitizer and are skipped in other builds; the switching tests
// run everywhere.
#include "fibers/fiber_switch.hpp"
#include "fibers/stack_pool.hpp"

#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#if defined(FJ_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace {

using fj::detail::context_handle;
using fj::detail::fiber_info;
using fj::detail::stack_pool;
using fj::detail::transfer;

constexpr std::size_t k_stack = std::size_t{256} << 10;
// The record's place below the top, clear of the bytes the pool keeps there.
constexpr std::size_t k_info_space =
    (sizeof(fiber_info) + stack_pool::k_reserved_top + 63) & ~std::size_t{63};

// One fiber on a stack of `pool`, with its sanitizer record at the top (as the runtime does).
struct test_fiber {
    explicit test_fiber(stack_pool& p) : pool(&p), sc(p.allocate()) {
        info = ::new (static_cast<char*>(sc.sp) - k_info_space) fiber_info{};
        fj::detail::init_sanitizer_context(*info, lowest(), sc.size - k_info_space);
    }
    ~test_fiber() {
        fj::detail::destroy_sanitizer_context(*info);
        info->~fiber_info();
        pool->deallocate(sc);
    }
    test_fiber(const test_fiber&) = delete;
    test_fiber& operator=(const test_fiber&) = delete;

    char* lowest() const { return static_cast<char*>(sc.sp) - sc.size; }

    stack_pool* pool;
    boost::context::stack_context sc;
    fiber_info* info;
};

// The state a ping-pong pair shares: the main side's context and record, the fiber's.
struct ping_pong {
    fiber_info main_info;
    context_handle main = nullptr;
    fiber_info* fiber_info_ptr = nullptr;
    context_handle fiber = nullptr;
    int rounds = 0;
    std::uint64_t sum = 0;
    bool ended = false;
};

// Switches back to the main side from `depth` out-of-line, instrumented frames down (each has
// an address-taken local, so ASan gives it redzones as well), and returns once resumed.
[[gnu::noinline]] void yield_at_depth(ping_pong& p, int depth) {
    volatile char frame_local[48];
    frame_local[0] = static_cast<char>(depth);
    if (depth > 0) {
        yield_at_depth(p, depth - 1);
    } else {
        const transfer t = fj::detail::switch_to(*p.fiber_info_ptr, p.main, p.main_info, nullptr);
        p.main = t.fctx;
    }
    p.sum += static_cast<unsigned char>(frame_local[0]);
}

transfer mark_ended(transfer t) noexcept {
    static_cast<ping_pong*>(t.data)->ended = true;
    return {nullptr, nullptr};
}

void ping_pong_body(transfer t) noexcept {
    auto& p = *static_cast<ping_pong*>(t.data);
    fj::detail::after_switch(nullptr, &p.main_info); // learns the main side's stack bounds (ASan)
    p.main = t.fctx;
    for (int i = 0; i < p.rounds; ++i)
        yield_at_depth(p, i % 7);
    volatile char exit_local[64]; // a frame of the entry function that never returns
    exit_local[0] = 1;
    (void)exit_local[0];
    fj::detail::exit_to(p.main, p.main_info, &p, &mark_ended);
}

// Runs one fiber that switches back `rounds` times, then ends. Each resume comes from a different
// depth of this side's frames too.
[[gnu::noinline]] void resume_at_depth(ping_pong& p, int depth) {
    volatile char frame_local[32];
    frame_local[0] = 0;
    if (depth > 0) {
        resume_at_depth(p, depth - 1);
        return;
    }
    const transfer t = fj::detail::switch_to(p.main_info, p.fiber, *p.fiber_info_ptr, &p);
    p.fiber = t.fctx;
    (void)frame_local[0];
}

void run_ping_pong(test_fiber& f, int rounds) {
    ping_pong p;
    p.rounds = rounds;
    p.fiber_info_ptr = f.info;
    fj::detail::capture_native_context(p.main_info);
    p.fiber = fj::detail::make_context(f.info, f.info->stack_size, &ping_pong_body);
    for (int i = 0; !p.ended; ++i)
        resume_at_depth(p, i % 5);
    EXPECT_EQ(p.sum, [&] {
        std::uint64_t expected = 0;
        for (int i = 0; i < rounds; ++i)
            for (int d = 0; d <= i % 7; ++d)
                expected += static_cast<std::uint64_t>(d);
        return expected;
    }());
}

TEST(fiber_switch, contexts_switched_at_any_depth_and_ended_keep_the_sanitizers_consistent) {
    stack_pool pool(k_stack);
    for (int fiber = 0; fiber < 200; ++fiber) {
        test_fiber f(pool);
        run_ping_pong(f, 50 + fiber % 13);
    }
}

TEST(fiber_switch, threads_running_fibers_at_once_stay_independent) {
    stack_pool pool(k_stack);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&pool] {
            for (int fiber = 0; fiber < 50; ++fiber) {
                test_fiber f(pool);
                run_ping_pong(f, 40);
            }
        });
    for (auto& t : threads)
        t.join();
}

#if defined(FJ_ASAN)
// One stack's whole mapping: its usable part and the guard below it.
std::size_t pool_total_size(std::size_t stack_size) {
    stack_pool pool(stack_size);
    return pool.stack_size() + pool.guard_size();
}

// The first poisoned byte of [begin, begin + size), or null.
const void* first_poisoned(const char* begin, std::size_t size) {
    return __asan_region_is_poisoned(const_cast<char*>(begin), size);
}

TEST(fiber_switch, an_ended_fiber_leaves_no_poison_on_its_stack) {
    stack_pool pool(k_stack);
    for (int fiber = 0; fiber < 20; ++fiber) {
        test_fiber f(pool);
        run_ping_pong(f, 10 + fiber);
        const void* bad = first_poisoned(f.lowest(), f.info->stack_size);
        EXPECT_EQ(bad, nullptr) << "poisoned "
                                << (reinterpret_cast<const char*>(f.info) -
                                    static_cast<const char*>(bad))
                                << " bytes below the stack's top";
    }
}

TEST(fiber_switch, stacks_are_mapped_and_unmapped_without_poison) {
    char* lowest = nullptr;
    std::size_t size = 0;
    {
        stack_pool pool(k_stack);
        boost::context::stack_context sc = pool.allocate();
        size = sc.size;
        lowest = static_cast<char*>(sc.sp) - size;
        // What a frame that never returned would leave behind, mid-stack and near the top.
        __asan_poison_memory_region(lowest + size / 2, 4096);
        __asan_poison_memory_region(lowest + size - 1024, 128);
        pool.deallocate(sc);
    } // unmapped here
    // The shadow of the unmapped range: reading it touches no application memory.
    EXPECT_EQ(first_poisoned(lowest, size), nullptr);

    // And a fresh mapping is clean even where someone else left poison and unmapped it: a
    // mapping of the same size, poisoned and unmapped, is where the kernel puts the next one.
    const std::size_t total = pool_total_size(k_stack);
    void* const foreign = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(foreign, MAP_FAILED);
    __asan_poison_memory_region(foreign, total);
    ::munmap(foreign, total);
    stack_pool pool(k_stack);
    boost::context::stack_context sc = pool.allocate();
    char* const low = static_cast<char*>(sc.sp) - sc.size;
    EXPECT_LT(low, static_cast<char*>(foreign) + total) << "the new stack should reuse the range";
    EXPECT_GE(static_cast<char*>(sc.sp), static_cast<char*>(foreign));
    EXPECT_EQ(first_poisoned(low, sc.size), nullptr);
    pool.deallocate(sc);
}
#else
TEST(fiber_switch, an_ended_fiber_leaves_no_poison_on_its_stack) {
    GTEST_SKIP() << "checks AddressSanitizer's shadow: runs in the asan builds";
}
TEST(fiber_switch, stacks_are_mapped_and_unmapped_without_poison) {
    GTEST_SKIP() << "checks AddressSanitizer's shadow: runs in the asan builds";
}
#endif

} // namespace
