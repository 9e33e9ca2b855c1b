// The pool of fiber stacks (runtime/src/fibers/stack_pool.hpp): reuse, the layout (usable region
// and guard), the guard registry a SIGSEGV handler reads, the counters, exactly-once hand-out under
// concurrency, trimming of deep pages, the per-worker cache, and a real boost::context::fiber on a
// pooled stack.
#include "fibers/stack_pool.hpp"
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <boost/context/fiber.hpp>

namespace {

using fj::detail::address_in_stack_guard;
using fj::detail::stack_cache;
using fj::detail::stack_pool;
using sctx_t = boost::context::stack_context;

constexpr std::size_t k_small = std::size_t{1} << 20; // 1 MiB stacks keep the tests light

// A boost::context StackAllocator over a pool: any fiber library can run on its stacks.
class fiber_stack_allocator {
public:
    explicit fiber_stack_allocator(stack_pool& pool) noexcept : m_pool(&pool) {}
    sctx_t allocate() { return m_pool->allocate(); }
    void deallocate(sctx_t& sctx) noexcept { m_pool->deallocate(sctx); }

private:
    stack_pool* m_pool;
};
constexpr std::size_t k_trim = std::size_t{64} << 10;
// Code on a stack leaves the pool's top bytes alone (its free-list link and TSan fiber).
constexpr std::size_t k_reserved = stack_pool::k_reserved_top;

std::size_t page() {
    return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

char* lowest_usable(const sctx_t& s) {
    return static_cast<char*>(s.sp) - s.size;
}

// Resident pages of [begin, end) (page-aligned), as mincore() reports them.
std::size_t resident_pages(const char* begin, const char* end) {
    const std::size_t n = static_cast<std::size_t>(end - begin) / page();
    std::vector<unsigned char> v(n);
    EXPECT_EQ(::mincore(const_cast<char*>(begin), n * page(), v.data()), 0);
    return static_cast<std::size_t>(
        std::count_if(v.begin(), v.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

TEST(stack_pool, a_returned_stack_is_reused_before_a_new_one_is_mapped) {
    stack_pool pool(k_small, k_trim);
    sctx_t a = pool.allocate();
    void* const top = a.sp;
    pool.deallocate(a);
    EXPECT_EQ(a.sp, nullptr); // the caller's copy is reset
    sctx_t b = pool.allocate();
    EXPECT_EQ(b.sp, top);
    EXPECT_EQ(pool.mapped(), 1u);
    pool.deallocate(b);
}

TEST(stack_pool, sizes_are_rounded_up_to_whole_pages) {
    stack_pool pool(1000, 10);
    EXPECT_EQ(pool.stack_size(), page());
    EXPECT_EQ(pool.trim_above(), page()); // not below the size: trimming is off
    EXPECT_EQ(pool.guard_size() % page(), 0u);
    EXPECT_GE(pool.guard_size(), stack_pool::k_guard_bytes);
    sctx_t s = pool.allocate();
    EXPECT_EQ(s.size, page());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.sp) % page(), 0u);
    pool.deallocate(s);

    stack_pool odd(k_small + 1, k_trim + 1);
    EXPECT_EQ(odd.stack_size(), k_small + page());
    EXPECT_EQ(odd.trim_above(), k_trim + page());
}

TEST(stack_pool, the_usable_region_is_writable_from_top_to_bottom) {
    stack_pool pool(k_small, k_trim);
    sctx_t s = pool.allocate();
    volatile char* const top_byte = static_cast<char*>(s.sp) - 1;
    volatile char* const bottom_byte = lowest_usable(s);
    *top_byte = 1;
    *bottom_byte = 2;
    EXPECT_EQ(*top_byte, 1);
    EXPECT_EQ(*bottom_byte, 2);
    pool.deallocate(s);
}

TEST(stack_pool_DeathTest, writing_into_the_guard_faults) {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
    // The child re-runs this test up to the statement, so it maps its own stack.
    stack_pool pool(k_small, k_trim);
    sctx_t s = pool.allocate();
    volatile char* const just_below = lowest_usable(s) - 1;
    volatile char* const guard_start = lowest_usable(s) - pool.guard_size();
    if (fj_test::k_sanitized) {
        // The sanitizers' SEGV handler reports and exits instead of dying by the signal.
        EXPECT_DEATH(*just_below = 1, "");
        EXPECT_DEATH(*guard_start = 1, "");
    } else {
        EXPECT_EXIT(*just_below = 1, ::testing::KilledBySignal(SIGSEGV), "");
        EXPECT_EXIT(*guard_start = 1, ::testing::KilledBySignal(SIGSEGV), "");
    }
    pool.deallocate(s);
}

TEST(stack_pool, address_in_stack_guard_recognises_the_guard_and_not_the_usable_part) {
    const char* guard_start;
    const char* just_below;
    {
        stack_pool pool(k_small, k_trim);
        sctx_t s = pool.allocate();
        guard_start = lowest_usable(s) - pool.guard_size();
        just_below = lowest_usable(s) - 1;
        EXPECT_TRUE(address_in_stack_guard(guard_start));
        EXPECT_TRUE(address_in_stack_guard(guard_start + pool.guard_size() / 2));
        EXPECT_TRUE(address_in_stack_guard(just_below));
        EXPECT_FALSE(address_in_stack_guard(lowest_usable(s)));
        EXPECT_FALSE(address_in_stack_guard(static_cast<char*>(s.sp) - 1));
        EXPECT_FALSE(address_in_stack_guard(s.sp)); // one past the top
        EXPECT_FALSE(address_in_stack_guard(guard_start - 1));
        int local = 0;
        EXPECT_FALSE(address_in_stack_guard(&local));
        EXPECT_FALSE(address_in_stack_guard(nullptr));

        // A second pool's guards are in the same process-wide registry.
        stack_pool other(2 * k_small, k_trim);
        sctx_t o = other.allocate();
        EXPECT_TRUE(address_in_stack_guard(lowest_usable(o) - 1));
        EXPECT_TRUE(address_in_stack_guard(just_below));
        other.deallocate(o);
        pool.deallocate(s);
    }
    // Unmapped with the pool, so unregistered: the range may now belong to anything.
    EXPECT_FALSE(address_in_stack_guard(guard_start));
    EXPECT_FALSE(address_in_stack_guard(just_below));
}

TEST(stack_pool, counters_track_live_peak_and_mapped_stacks) {
    stack_pool pool(k_small, k_trim);
    EXPECT_EQ(pool.live(), 0u);
    EXPECT_EQ(pool.peak_live(), 0u);
    EXPECT_EQ(pool.mapped(), 0u);
    std::vector<sctx_t> held;
    for (int i = 0; i < 3; ++i)
        held.push_back(pool.allocate());
    EXPECT_EQ(pool.live(), 3u);
    EXPECT_EQ(pool.peak_live(), 3u);
    EXPECT_EQ(pool.mapped(), 3u);
    EXPECT_EQ(pool.pooled(), 0u);
    pool.deallocate(held.back());
    held.pop_back();
    pool.deallocate(held.back());
    held.pop_back();
    EXPECT_EQ(pool.live(), 1u);
    EXPECT_EQ(pool.peak_live(), 3u); // a maximum: it does not come down
    EXPECT_EQ(pool.mapped(), 3u);    // never unmapped in steady state
    EXPECT_EQ(pool.pooled(), 2u);
    held.push_back(pool.allocate());
    held.push_back(pool.allocate());
    EXPECT_EQ(pool.live(), 3u);
    EXPECT_EQ(pool.peak_live(), 3u);
    EXPECT_EQ(pool.mapped(), 3u); // both came from the pool
    held.push_back(pool.allocate());
    EXPECT_EQ(pool.peak_live(), 4u);
    EXPECT_EQ(pool.mapped(), 4u);
    for (auto& s : held)
        pool.deallocate(s);
    EXPECT_EQ(pool.live(), 0u);
    EXPECT_EQ(pool.pooled(), 4u);
}

TEST(stack_pool, a_failed_mapping_throws_bad_alloc_and_changes_nothing) {
    stack_pool pool(std::size_t{1} << 62, k_trim); // more than the address space
    EXPECT_THROW(pool.allocate(), std::bad_alloc);
    stack_cache cache;
    EXPECT_THROW(cache.allocate(pool), std::bad_alloc);
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_EQ(pool.live(), 0u);
    EXPECT_EQ(pool.peak_live(), 0u);
    EXPECT_EQ(pool.mapped(), 0u);
}

TEST(stack_pool, deep_pages_are_released_on_return_and_the_top_stays_resident) {
    const std::size_t size = 4 * k_small;
    const std::size_t trim = 256 * 1024;
    stack_pool pool(size, trim);
    sctx_t s = pool.allocate();
    char* const low = lowest_usable(s);
    char* const top = static_cast<char*>(s.sp);
    std::memset(low, 0x5a, size - k_reserved); // a deep burst touches the whole stack
    EXPECT_EQ(resident_pages(low, top), size / page());
    pool.deallocate(s);
    EXPECT_EQ(resident_pages(low, top - trim), 0u);
    EXPECT_EQ(resident_pages(top - trim, top), trim / page()); // reused next time: kept

    // The same through a cache.
    stack_cache cache;
    sctx_t c = cache.allocate(pool);
    ASSERT_EQ(c.sp, top);
    std::memset(low, 0x5a, size - k_reserved);
    cache.deallocate(pool, c);
    EXPECT_EQ(resident_pages(low, top - trim), 0u);
    // Trimmed pages read back as zeros (MADV_DONTNEED on private anonymous memory).
    EXPECT_EQ(low[0], 0);
    EXPECT_EQ(resident_pages(low, top - trim), 1u);
}

// What a real deep call chain leaves at the trim line: sparse words (return addresses) in the page
// just below it, and pages further down.
TEST(stack_pool, a_stack_used_past_the_trim_line_is_trimmed_even_if_written_sparsely) {
    const std::size_t size = 4 * k_small;
    const std::size_t trim = 256 * 1024;
    stack_pool pool(size, trim);
    sctx_t s = pool.allocate();
    char* const low = lowest_usable(s);
    char* const top = static_cast<char*>(s.sp);
    top[-1] = 1;
    (top - trim - page())[page() / 2] = 1; // one byte in the page just below the line
    low[0] = 1;
    (low + size / 2)[0] = 1;
    EXPECT_EQ(resident_pages(low, top - trim), 3u);
    pool.deallocate(s);
    EXPECT_EQ(resident_pages(low, top - trim), 0u);
    EXPECT_EQ(resident_pages(top - page(), top), 1u);
}

// Depth is judged by the page just below the trim line (stack_pool::trim): a use that left it
// zero is not trimmed (a shallow use, or the documented blind spot), and the next return that did
// write there releases everything below the line, pages left by earlier uses included.
TEST(stack_pool, trimming_follows_the_page_just_below_the_trim_line) {
    const std::size_t size = 4 * k_small;
    const std::size_t trim = 256 * 1024;
    stack_pool pool(size, trim);
    sctx_t s = pool.allocate();
    char* const low = lowest_usable(s);
    char* const top = static_cast<char*>(s.sp);
    low[0] = 1; // deep, but nothing written just below the line
    pool.deallocate(s);
#ifndef FJ_VALGRIND // valgrind builds always trim
    EXPECT_EQ(resident_pages(low, low + page()), 1u);
#endif
    // The next return that did write at the line releases it.
    s = pool.allocate();
    (top - trim - 8)[0] = 1;
    pool.deallocate(s);
    EXPECT_EQ(resident_pages(low, top - trim), 0u);
}

TEST(stack_pool, trimming_is_off_when_the_trim_line_is_at_or_below_the_bottom) {
    stack_pool pool(k_small, k_small);
    sctx_t s = pool.allocate();
    char* const low = lowest_usable(s);
    std::memset(low, 0x5a, k_small - k_reserved);
    pool.deallocate(s);
    EXPECT_EQ(resident_pages(low, low + k_small), k_small / page());
}

TEST(stack_pool, a_cache_spills_and_refills_in_batches) {
    constexpr std::size_t n = 20;
    stack_pool pool(k_small, k_trim);
    std::set<void*> tops;
    {
        stack_cache cache;
        std::vector<sctx_t> held;
        for (std::size_t i = 0; i < n; ++i) {
            held.push_back(cache.allocate(pool));
            tops.insert(held.back().sp);
        }
        EXPECT_EQ(tops.size(), n);
        EXPECT_EQ(pool.mapped(), n); // the pool was empty: each was mapped
        EXPECT_EQ(pool.live(), n);
        EXPECT_EQ(cache.size(), 0u);

        void* const last_returned = held.back().sp;
        for (auto& s : held)
            cache.deallocate(pool, s);
        EXPECT_EQ(pool.live(), 0u);
        EXPECT_LE(cache.size(), stack_cache::k_capacity);
        EXPECT_EQ(cache.size() + pool.pooled(), n); // the rest was spilled to the pool
        EXPECT_EQ(pool.pooled() % stack_cache::k_batch, 0u);

        // The most recently returned stack comes back first.
        sctx_t again = cache.allocate(pool);
        EXPECT_EQ(again.sp, last_returned);
        cache.deallocate(pool, again);

        held.clear();
        for (std::size_t i = 0; i < n; ++i) {
            held.push_back(cache.allocate(pool));
            EXPECT_EQ(tops.count(held.back().sp), 1u); // refilled from the pool, none mapped
        }
        EXPECT_EQ(pool.mapped(), n);
        EXPECT_EQ(pool.pooled(), 0u);
        EXPECT_EQ(pool.live(), n);
        EXPECT_EQ(pool.peak_live(), n);
        for (auto& s : held)
            cache.deallocate(pool, s);
    } // the cache's destructor flushes it
    EXPECT_EQ(pool.pooled(), n);
    EXPECT_EQ(pool.live(), 0u);
}

TEST(stack_pool, a_cache_returns_the_most_recently_returned_stack_first) {
    stack_pool pool(k_small, k_trim);
    stack_cache cache;
    sctx_t a = cache.allocate(pool);
    sctx_t b = cache.allocate(pool);
    void* const top_b = b.sp;
    cache.deallocate(pool, a);
    cache.deallocate(pool, b);
    sctx_t c = cache.allocate(pool);
    EXPECT_EQ(c.sp, top_b);
    cache.deallocate(pool, c);
}

TEST(stack_pool, a_cache_used_with_another_pool_flushes_into_the_first) {
    stack_pool first(k_small, k_trim);
    stack_pool second(2 * k_small, k_trim);
    stack_cache cache;
    sctx_t a = cache.allocate(first);
    cache.deallocate(first, a);
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(first.pooled(), 0u);
    sctx_t b = cache.allocate(second);
    EXPECT_EQ(b.size, second.stack_size());
    EXPECT_EQ(first.pooled(), 1u); // went home, not to the second pool
    cache.deallocate(second, b);
    cache.flush();
    EXPECT_EQ(second.pooled(), 1u);
    EXPECT_EQ(cache.size(), 0u);
}

// Threads take stacks from the pool and from their own caches, hand them to each other through an
// exchange (so a stack is often returned by a thread that did not take it), and check that no
// stack is ever held by two owners: the owner set refuses a duplicate, and the tags each owner
// writes at the top and the bottom of its stack are still there when the next owner returns it.
TEST(stack_pool, concurrent_owners_never_share_a_stack) {
    fj_test::watchdog dog(fj_test::current_test_name());
    constexpr int k_threads = 4;
    const std::size_t iterations = fj_test::scaled(4000);
    stack_pool pool(256 * 1024, k_trim);

    struct token {
        sctx_t sctx;
        std::uint64_t tag;
    };
    std::mutex mutex;
    std::set<void*> owned;       // stacks currently held by some owner
    std::vector<token> exchange; // stacks in transit between threads
    std::atomic<int> failures{0};

    auto worker = [&](int id) {
        stack_cache cache;
        std::mt19937 rng(static_cast<unsigned>(id));
        std::vector<token> mine;
        auto check_and_return = [&](token t) {
            std::uint64_t at_top;
            std::uint64_t at_bottom;
            std::memcpy(&at_top, static_cast<char*>(t.sctx.sp) - 64, sizeof at_top);
            std::memcpy(&at_bottom, lowest_usable(t.sctx), sizeof at_bottom);
            if (at_top != t.tag || at_bottom != t.tag)
                failures.fetch_add(1);
            {
                std::lock_guard lock(mutex);
                if (owned.erase(t.sctx.sp) != 1)
                    failures.fetch_add(1);
            }
            if (rng() % 2 == 0)
                cache.deallocate(pool, t.sctx);
            else
                pool.deallocate(t.sctx);
        };
        for (std::size_t i = 0; i < iterations; ++i) {
            token t{rng() % 2 == 0 ? cache.allocate(pool) : pool.allocate(),
                    (static_cast<std::uint64_t>(id) << 32) | i};
            {
                std::lock_guard lock(mutex);
                if (!owned.insert(t.sctx.sp).second)
                    failures.fetch_add(1);
            }
            std::memcpy(static_cast<char*>(t.sctx.sp) - 64, &t.tag, sizeof t.tag);
            std::memcpy(lowest_usable(t.sctx), &t.tag, sizeof t.tag);
            if (rng() % 3 == 0) {
                std::lock_guard lock(mutex);
                exchange.push_back(t);
            } else {
                mine.push_back(t);
            }
            if (mine.size() > 6 || (!mine.empty() && rng() % 2 == 0)) {
                const std::size_t k = rng() % mine.size();
                const token back = mine[k];
                mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
                check_and_return(back);
            }
            std::optional<token> other;
            {
                std::lock_guard lock(mutex);
                if (!exchange.empty() && rng() % 2 == 0) {
                    other = exchange.back();
                    exchange.pop_back();
                }
            }
            if (other)
                check_and_return(*other);
        }
        for (const token& t : mine)
            check_and_return(t);
    };
    std::vector<std::thread> threads;
    for (int id = 0; id < k_threads; ++id)
        threads.emplace_back(worker, id);
    for (auto& t : threads)
        t.join();
    for (const token& t : exchange) {
        sctx_t s = t.sctx;
        pool.deallocate(s);
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(pool.live(), 0u);
    EXPECT_EQ(pool.pooled(), pool.mapped()); // every cache flushed at thread exit
    EXPECT_LE(pool.peak_live(), pool.mapped());
    EXPECT_GT(pool.peak_live(), 1u);
}

// A frame per level with a buffer the compiler must keep, so the recursion really goes deep.
std::uintptr_t g_deepest = 0; // an address, never dereferenced

[[gnu::noinline]] std::size_t recurse(std::size_t depth) {
    volatile char frame[256];
    frame[0] = static_cast<char>(depth);
    frame[255] = 1;
    if (depth == 0) {
        g_deepest = reinterpret_cast<std::uintptr_t>(&frame[0]);
        return 0;
    }
    return recurse(depth - 1) + static_cast<std::size_t>(frame[255]);
}

TEST(stack_pool, a_boost_fiber_runs_a_deep_recursion_on_a_pooled_stack) {
    namespace ctx = boost::context;
    stack_pool pool(k_small, k_trim);
    constexpr std::size_t depth = 2000; // more than 512 KiB of frames
    std::size_t result = 0;
    {
        ctx::fiber f(std::allocator_arg, fiber_stack_allocator(pool), [&](ctx::fiber&& caller) {
            result = recurse(depth);
            return std::move(caller);
        });
        EXPECT_EQ(pool.live(), 1u);
        f = std::move(f).resume();
        EXPECT_FALSE(f); // finished: its stack went back to the pool
    }
    EXPECT_EQ(result, depth);
    EXPECT_EQ(pool.live(), 0u);
    EXPECT_EQ(pool.pooled(), 1u);
    sctx_t s = pool.allocate(); // the fiber's stack, reused
    if (fj_test::k_address_sanitizer) {
        // With detect_stack_use_after_return, ASan moves the frames to its heap "fake stack".
        pool.deallocate(s);
        return;
    }
    const char* const deepest = reinterpret_cast<const char*>(g_deepest);
    EXPECT_GT(deepest, lowest_usable(s));
    EXPECT_LT(deepest, static_cast<const char*>(s.sp));
    EXPECT_GT(static_cast<const char*>(s.sp) - deepest, static_cast<std::ptrdiff_t>(depth * 256));
    pool.deallocate(s);
}

} // namespace
