// Pools with more workers than CPUs in their affinity mask (docs/design/crowded.md): such a pool
// wakes a sleeper only while fewer workers are awake than there are CPUs, so these tests attack
// what that could lose. Every task runs, whatever the worker count; and a task that forks a child
// and then blocks in the kernel until that child has run (so the pusher cannot take its own work)
// still finishes, through a sleeper's timed look. The pools are made on a thread confined to one
// CPU: their workers inherit its mask.
#include "platform/cpus.hpp"
#include "sleep/crowding.hpp" // the rules (not installed)
#include "support.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <sched.h>
#include <thread>
#include <vector>

namespace {

using fj::detail::awake_fill_cpus;
using fj::detail::awake_workers;
using fj::detail::k_backstop_first;
using fj::detail::k_backstop_last;
using fj::detail::next_backstop;

TEST(crowding_rules, AwakeWorkersCountsThoseNotWaiting) {
    EXPECT_EQ(awake_workers(8, 0), 8u);
    EXPECT_EQ(awake_workers(8, 7), 1u);
    EXPECT_EQ(awake_workers(8, 8), 0u);
    EXPECT_EQ(awake_workers(4, 6), 0u); // spare workers waiting too: never below zero
}

TEST(crowding_rules, WakeSkippedOnlyWhenAwakeWorkersFillTheCpus) {
    EXPECT_TRUE(awake_fill_cpus(8, 7, 1));  // one awake on one CPU: the pusher takes its work
    EXPECT_FALSE(awake_fill_cpus(8, 7, 2)); // a CPU is free: wake
    EXPECT_TRUE(awake_fill_cpus(8, 6, 2));  // two awake on two CPUs
    EXPECT_FALSE(awake_fill_cpus(8, 8, 1)); // nobody awake (a waker outside the pool): wake
    // No more workers than CPUs: a push that finds a sleeper always wakes one.
    for (std::uint32_t waiters = 1; waiters <= 4; ++waiters)
        EXPECT_FALSE(awake_fill_cpus(4, waiters, 4)) << waiters;
}

TEST(crowding_rules, BackstopDoublesUpToItsLimit) {
    auto t = k_backstop_first;
    for (int i = 0; i < 20; ++i) {
        const auto next = next_backstop(t);
        EXPECT_GE(next, t);
        EXPECT_LE(next, k_backstop_last);
        t = next;
    }
    EXPECT_EQ(t, k_backstop_last);
}

TEST(affinity_cpu_count, MatchesTheMaskAndIsPositive) {
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    EXPECT_EQ(fj::detail::affinity_cpu_count(), static_cast<std::size_t>(CPU_COUNT(&set)));
    EXPECT_GE(fj::detail::affinity_cpu_count(), 1u);
}

// Runs body on a new thread confined to one CPU of the current mask.
template <class Body>
void on_one_cpu(Body body) {
    std::thread t([&] {
        cpu_set_t set;
        CPU_ZERO(&set);
        ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        int first = 0;
        while (!CPU_ISSET(first, &set))
            ++first;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        ASSERT_EQ(sched_setaffinity(0, sizeof set, &set), 0);
        ASSERT_EQ(fj::detail::affinity_cpu_count(), 1u);
        body();
    });
    t.join();
}

class crowded_pool : public fj_test::workers_test {};

TEST_P(crowded_pool, RunsEveryTask) {
    on_one_cpu([&] {
        fj::scheduler pool(workers());
        EXPECT_EQ(pool.execute([] { return fj_test::fib_join(20); }), fj_test::fib_serial(20));
        EXPECT_EQ(pool.execute([] { return fj_test::fib_fork(18); }), fj_test::fib_serial(18));
        std::vector<std::atomic<int>> hits(2000);
        for (int frame = 0; frame < 20; ++frame)
            pool.execute([&] {
                fj::parallel_for(std::size_t{0}, hits.size(),
                                 [&](std::size_t i) { hits[i].fetch_add(1); });
            });
        for (const auto& h : hits)
            EXPECT_EQ(h.load(), 20);
        // From outside the pool too: submissions wake sleepers as before.
        std::vector<fj::future<int>> futures;
        for (int i = 0; i < 100; ++i)
            futures.push_back(pool.submit([i] { return i; }));
        for (int i = 0; i < 100; ++i)
            EXPECT_EQ(futures[static_cast<std::size_t>(i)].get(), i);
    });
}

// The pusher blocks in the kernel (not through fj) until the child it forked has run: the wake-up
// it skipped must not leave the child queued for ever.
TEST_P(crowded_pool, ChildOfABlockedPusherRuns) {
    on_one_cpu([&] {
        fj::scheduler_options options;
        options.workers = workers();
        options.max_spare_workers = 0; // only the sleepers' timed looks can save it
        fj::scheduler pool(options);
        for (int round = 0; round < 3; ++round) {
            // Let the idle workers go to sleep (they spin for 50 us by default), so that the
            // fork below finds sleepers and, with the one CPU taken, wakes none of them.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            std::mutex m;
            std::condition_variable cv;
            bool child_ran = false;
            pool.execute([&] {
                fj::future<void> child = fj::fork([&] {
                    std::lock_guard lock(m);
                    child_ran = true;
                    cv.notify_one();
                });
                {
                    std::unique_lock lock(m);
                    cv.wait(lock, [&] { return child_ran; });
                }
                child.get();
            });
            EXPECT_TRUE(child_ran);
        }
    });
}

INSTANTIATE_TEST_SUITE_P(workers, crowded_pool, ::testing::Values(2, 4, 8),
                         fj_test::worker_count_name);

} // namespace
