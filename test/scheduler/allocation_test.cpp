// The fast paths do not touch the heap (no allocation per fork or join): fj::join keeps both task
// frames on the caller's stack, and fork() takes its future state from the worker's block cache,
// which recycles the blocks of finished tasks. Every allocation the runtime makes goes through
// ::operator new (block_cache.hpp, worker.hpp, the deque's rings), so this binary replaces the
// global operator new and counts the calls. Each test warms its pool up with the same computation
// first (deque rings grown, blocks cached, fiber stacks mapped, which is mmap, not the heap), then
// counts the allocations made while the computation runs again.
#include "support.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

std::atomic<long> g_allocations{0};

void* counted_allocation(std::size_t size, std::size_t alignment) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (size == 0)
        size = 1;
    void* p = nullptr;
    if (alignment <= alignof(std::max_align_t))
        p = std::malloc(size);
    else if (posix_memalign(&p, alignment, size) != 0)
        p = nullptr;
    return p;
}

// Out of line: inlined into a delete expression, a plain free() would trip GCC 12's
// -Wmismatched-new-delete, which pairs the pointer's operator new with this free.
[[gnu::noinline]] void counted_release(void* p) noexcept {
    std::free(p);
}

} // namespace

// The replaceable global allocation functions ([new.delete]): every form that can be called,
// counted, over malloc / free.
void* operator new(std::size_t size) {
    if (void* p = counted_allocation(size, 0))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    return ::operator new(size);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
    if (void* p = counted_allocation(size, static_cast<std::size_t>(alignment)))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
    return ::operator new(size, alignment);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    return counted_allocation(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    return counted_allocation(size, 0);
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
    return counted_allocation(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
    return counted_allocation(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* p) noexcept {
    counted_release(p);
}
void operator delete[](void* p) noexcept {
    counted_release(p);
}
void operator delete(void* p, std::size_t) noexcept {
    counted_release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    counted_release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    counted_release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    counted_release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    counted_release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    counted_release(p);
}

namespace {

constexpr int k_n = 20; // fib(20): 10,945 forks
constexpr long k_fib_20 = 6765;
constexpr long k_forks = 10945;

using fj_test::fib_join;

// The seed style: fork returns a future (a pooled state), reschedule_until joins it.
long fib_fork(int n) {
    if (n < 2)
        return n;
    fj::future<long> a = fj::fork([=] { return fib_fork(n - 1); });
    const long b = fib_fork(n - 2);
    fj::reschedule_until([&] { return a.is_ready(); });
    return a.get() + b;
}

struct counted_run {
    long result;
    long allocations;
};

// Runs fib on `pool` three times to warm it up, then once counted: the count covers only the
// computation (taken inside the task, so the outside submit and get are not in it).
template <class Fib>
counted_run steady_state(fj::scheduler& pool, Fib fib) {
    for (int i = 0; i < 3; ++i) {
        auto warm_up = pool.submit([&] { return fib(k_n); });
        EXPECT_EQ(fj_test::get_or(warm_up, -1L), k_fib_20);
    }
    auto counted = pool.submit([&] {
        const long before = g_allocations.load(std::memory_order_relaxed);
        const long result = fib(k_n);
        return counted_run{result, g_allocations.load(std::memory_order_relaxed) - before};
    });
    return fj_test::get_or(counted, counted_run{-1, -1});
}

class allocation_test : public fj_test::guarded_test {};

// The counter sees the allocations it should: without this, a replacement the linker did not
// take would make every test below pass.
TEST_F(allocation_test, the_counter_sees_runtime_allocations) {
    const long before = g_allocations.load();
    fj::scheduler pool(1); // workers, deques, caches: allocated
    EXPECT_GT(g_allocations.load(), before);
}

// One worker: nothing is stolen, so every join pops its own child back and every forked state
// returns to the cache it came from. Not one allocation in 10,945 joins or forks.
TEST_F(allocation_test, join_and_fork_allocate_nothing_on_one_worker) {
    fj::scheduler pool(1);
    const counted_run join = steady_state(pool, fib_join);
    EXPECT_EQ(join.result, k_fib_20);
    EXPECT_EQ(join.allocations, 0) << "fj::join allocated in its steady state";
    const counted_run fork = steady_state(pool, fib_fork);
    EXPECT_EQ(fork.result, k_fib_20);
    EXPECT_EQ(fork.allocations, 0) << "fork() allocated in its steady state";
}

// Two workers: steals, parks and states freed on the other worker (which travel back through the
// central pool in batches) may make a few allocations when a run needs more blocks than any
// before it, but none per fork: fewer than one per 100 forks, where a per-fork allocation would
// give 10,945.
TEST_F(allocation_test, join_and_fork_do_not_allocate_per_fork_on_two_workers) {
    fj::scheduler pool(2);
    const counted_run join = steady_state(pool, fib_join);
    EXPECT_EQ(join.result, k_fib_20);
    EXPECT_LT(join.allocations, k_forks / 100) << "fj::join allocated per fork";
    const counted_run fork = steady_state(pool, fib_fork);
    EXPECT_EQ(fork.result, k_fib_20);
    EXPECT_LT(fork.allocations, k_forks / 100) << "fork() allocated per fork";
    std::printf("allocations during fib(%d) on 2 workers: join %ld, fork %ld (%ld forks)\n", k_n,
                join.allocations, fork.allocations, k_forks);
}

} // namespace
