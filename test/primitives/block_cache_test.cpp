// The block caches behind fork tasks and futures (runtime/include/forkjoin/detail/block_cache.hpp).
#include "support.hpp"

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <forkjoin/detail/block_cache.hpp>
#include <forkjoin/forkjoin.hpp>

namespace {

using fj::detail::block_cache;

// Every size fits the smallest class that holds it; bigger than 512 bytes is not cached.
TEST(block_cache_test, SizeClasses) {
    EXPECT_EQ(block_cache::class_of(1), 0u);
    EXPECT_EQ(block_cache::class_of(64), 0u);
    EXPECT_EQ(block_cache::class_of(65), 1u);
    EXPECT_EQ(block_cache::class_of(512), 3u);
    EXPECT_EQ(block_cache::class_of(513), block_cache::k_class_count);
}

// A freed block is handed out again by the same cache (LIFO), without going to the heap.
TEST(block_cache_test, ReusesFreedBlocks) {
    block_cache cache;
    void* a = cache.allocate(0);
    cache.deallocate(a, 0);
    EXPECT_EQ(cache.allocate(0), a);
    cache.deallocate(a, 0);
}

// Blocks freed on one thread beyond its cache's cap travel through the central pool to another
// thread's empty cache: a producer/consumer pair recycles memory instead of calling malloc.
TEST(block_cache_test, BlocksFreedOnOneThreadAreReusedOnAnother) {
    constexpr std::size_t k_class = 1; // a class no other test in this process uses
    const std::size_t n = block_cache::k_max_cached_per_class + 2 * block_cache::k_batch;
    std::vector<void*> blocks;
    {
        block_cache producer;
        for (std::size_t i = 0; i < n; ++i)
            blocks.push_back(producer.allocate(k_class));
        std::thread consumer([&] {
            block_cache freeing;
            for (void* p : blocks)
                freeing.deallocate(p, k_class); // spills batches to the central pool
            // `freeing` is destroyed here and flushes the rest to the central pool too
        });
        consumer.join();
    }
    const std::set<void*> freed(blocks.begin(), blocks.end());
    block_cache reuser;
    std::vector<void*> again;
    for (std::size_t i = 0; i < block_cache::k_batch; ++i)
        again.push_back(reuser.allocate(k_class));
    std::size_t reused = 0;
    for (void* p : again)
        reused += freed.count(p);
    EXPECT_EQ(reused, again.size()) << "an empty cache should refill from the central pool";
    for (void* p : again)
        reuser.deallocate(p, k_class);
}

// Frees `n` blocks of class `c` from a thread whose cache then goes away: everything beyond
// the thread cache's cap ends up in the central pool.
void pass_through_central_pool(std::size_t c, std::size_t n) {
    std::vector<void*> blocks;
    block_cache producer;
    for (std::size_t i = 0; i < n; ++i)
        blocks.push_back(producer.allocate(c));
    std::thread([&] {
        block_cache freeing;
        for (void* p : blocks)
            freeing.deallocate(p, c);
    }).join();
}

// A burst far beyond the resident batches stays pooled (the next burst reuses it instead of
// calling malloc), and release_idle_blocks(true) gives the excess back at once.
TEST(block_cache_test, BurstIsKeptThenReleased) {
    constexpr std::size_t k_class = 2;
    constexpr std::size_t k_resident_blocks =
        block_cache::k_central_resident_batches * block_cache::k_batch;
    pass_through_central_pool(k_class, k_resident_blocks + 40 * block_cache::k_batch);
    EXPECT_GE(fj::detail::central_pool_blocks(k_class),
              k_resident_blocks + 39 * block_cache::k_batch);
    EXPECT_TRUE(fj::detail::idle_blocks_pending());
    fj::detail::release_idle_blocks(true);
    EXPECT_FALSE(fj::detail::idle_blocks_pending());
    EXPECT_LE(fj::detail::central_pool_blocks(k_class),
              k_resident_blocks + 2 * block_cache::k_batch)
        << "the excess should be freed, the resident batches kept";
}

// Excess batches younger than the decay (block_cache::k_decay, 10 s) survive
// release_idle_blocks(false); older ones go. Timing only in the safe direction: a loaded machine
// can only make the batches older.
TEST(block_cache_test, ExcessDecaysOnceUnusedForTheDecay) {
    constexpr std::size_t k_class = 3;
    constexpr std::size_t k_resident_blocks =
        block_cache::k_central_resident_batches * block_cache::k_batch;
    const auto start = std::chrono::steady_clock::now();
    pass_through_central_pool(k_class, k_resident_blocks + 8 * block_cache::k_batch);
    fj::detail::release_idle_blocks(false);
    if (std::chrono::steady_clock::now() - start < block_cache::k_decay / 2) {
        EXPECT_TRUE(fj::detail::idle_blocks_pending()) << "released before the decay";
    }
    std::this_thread::sleep_for(block_cache::k_decay + std::chrono::milliseconds(100));
    fj::detail::release_idle_blocks(false);
    EXPECT_FALSE(fj::detail::idle_blocks_pending());
}

// An idle pool gives a burst's memory back by itself: its sleeping worker wakes once the
// excess has decayed and releases it (no further activity needed).
TEST(block_cache_test, IdlePoolReleasesBurstMemory) {
    fj::scheduler pool(1);
    const auto start = std::chrono::steady_clock::now();
    {
        std::vector<fj::future<int>> burst;
        for (int i = 0; i < 200000; ++i)
            burst.push_back(pool.submit([i] { return i; }));
        long sum = 0;
        for (auto& f : burst)
            sum += f.get();
        EXPECT_EQ(sum, 199999L * 200000L / 2);
    }
    // The futures were freed on this thread; its cache spilled the excess into the central pool,
    // where none of it has decayed yet unless the burst itself took half the decay.
    if (std::chrono::steady_clock::now() - start < block_cache::k_decay / 2) {
        EXPECT_TRUE(fj::detail::idle_blocks_pending());
    }
    // Within the decay plus worker 0's 1 s sleep timeout; generous for a loaded machine.
    EXPECT_TRUE(fj_test::spin_until([] { return !fj::detail::idle_blocks_pending(); },
                                    block_cache::k_decay + std::chrono::seconds(20)))
        << "the idle worker did not release the burst's blocks";
}

// The calling thread's outside cache exists while the thread runs and is the same object on
// every call.
TEST(block_cache_test, OutsideCacheIsPerThread) {
    block_cache* mine = fj::detail::outside_cache();
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(fj::detail::outside_cache(), mine);
    block_cache* other = nullptr;
    std::thread([&] { other = fj::detail::outside_cache(); }).join();
    EXPECT_NE(other, nullptr);
    EXPECT_NE(other, mine);
}

} // namespace
