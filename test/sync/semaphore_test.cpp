// fj::counting_semaphore / fj::binary_semaphore: bounded concurrency, arrival order, timeouts.
#include "sync/sync_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <forkjoin/semaphore.hpp>

namespace {

using namespace std::chrono_literals;

TEST(fj_semaphore, at_most_its_count_of_tasks_hold_a_token) {
    fj::scheduler pool(2);
    fj::counting_semaphore<3> tokens(3);
    std::atomic<int> holding{0};
    std::atomic<int> most{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 40; ++i)
        tasks.push_back(pool.submit([&] {
            tokens.acquire();
            const int now = holding.fetch_add(1) + 1;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            holding.fetch_sub(1);
            tokens.release();
        }));
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_LE(most.load(), 3);
    EXPECT_GE(most.load(), 1);
}

TEST(fj_semaphore, tokens_go_to_waiters_in_arrival_order) {
    fj::scheduler pool(1);
    if (!fj_test::parks(pool))
        GTEST_SKIP() << "parking is off: the order of blocked threads is not observable here";
    fj::binary_semaphore gate(0);
    std::mutex order_lock;
    std::vector<int> order; // guarded by order_lock
    std::atomic<bool> checked{false};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 6; ++i) {
        tasks.push_back(pool.submit([&, i] {
            gate.acquire();
            while (!checked.load()) // hold the token until the test has tried to barge
                std::this_thread::yield();
            {
                std::lock_guard hold(order_lock);
                order.push_back(i);
            }
            gate.release();
        }));
        fj_test::expect_parks_reach(pool, static_cast<std::uint64_t>(i) + 1);
    }
    gate.release(); // to the first waiter, not to the count
    EXPECT_FALSE(gate.try_acquire());
    checked.store(true);
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_TRUE(gate.try_acquire()); // the last task's release went back to the count
}

TEST(fj_semaphore, timed_acquires_and_bad_counts) {
    fj::scheduler pool(2);
    fj::counting_semaphore<2> tokens(0);
    fj::future<void> on_task = pool.submit([&] {
        const auto began = std::chrono::steady_clock::now();
        EXPECT_FALSE(tokens.try_acquire_for(20ms));
        EXPECT_GE(std::chrono::steady_clock::now() - began, 20ms);
        EXPECT_FALSE(tokens.try_acquire_until(std::chrono::system_clock::now() + 1ms));
    });
    EXPECT_TRUE(fj_test::get_void(on_task));
    EXPECT_FALSE(tokens.try_acquire_for(1ms)); // on a thread
    tokens.release(2);
    EXPECT_THROW(tokens.release(1), std::invalid_argument); // above max()
    EXPECT_THROW(tokens.release(-1), std::invalid_argument);
    EXPECT_TRUE(tokens.try_acquire_for(1ms));
    EXPECT_TRUE(tokens.try_acquire());
    EXPECT_FALSE(tokens.try_acquire());
    EXPECT_THROW(fj::counting_semaphore<2>(3), std::invalid_argument);
    EXPECT_THROW(fj::binary_semaphore(-1), std::invalid_argument);
}

} // namespace
