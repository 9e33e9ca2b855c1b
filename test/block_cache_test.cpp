// The block caches behind fork tasks and futures (runtime/include/forkjoin/detail/block_cache.hpp).
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <forkjoin/detail/block_cache.hpp>

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
