// fj::latch and fj::barrier: more waiting tasks than workers, phases, bad counts.
#include "sync/sync_support.hpp"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <forkjoin/barrier.hpp>
#include <forkjoin/latch.hpp>

namespace {

TEST(fj_latch, four_tasks_meet_on_two_workers_without_spare_threads) {
    fj::scheduler pool(2);
    fj::latch all_here(4);
    std::atomic<int> past{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 4; ++i)
        tasks.push_back(pool.submit([&] {
            all_here.arrive_and_wait();
            past.fetch_add(1);
        }));
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(past.load(), 4);
    EXPECT_TRUE(all_here.try_wait());
    if (fj_test::parks(pool)) {
        EXPECT_EQ(fj_test::spares_started(pool), 0u);
    }
}

TEST(fj_latch, a_thread_counts_down_for_waiting_tasks) {
    fj::scheduler pool(2);
    fj::latch start(1);
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 6; ++i)
        tasks.push_back(pool.submit([&] { start.wait(); }));
    EXPECT_FALSE(start.try_wait());
    start.count_down();
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    start.wait(); // done: returns at once
}

TEST(fj_latch, counts_below_zero_are_rejected) {
    EXPECT_THROW(fj::latch(-1), std::invalid_argument);
    fj::latch two(2);
    EXPECT_THROW(two.count_down(3), std::invalid_argument);
    EXPECT_THROW(two.count_down(-1), std::invalid_argument);
    two.count_down(2); // the failed calls changed nothing
    EXPECT_TRUE(two.try_wait());
}

TEST(fj_barrier, tasks_go_through_phases_together_and_the_completion_runs_once_each) {
    fj::scheduler pool(2);
    constexpr int k_tasks = 4;
    constexpr int k_phases = 20;
    int completed = 0; // written by the completion only, between phases
    fj::barrier sync(k_tasks, [&]() noexcept { ++completed; });
    std::atomic<int> wrong{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < k_tasks; ++i)
        tasks.push_back(pool.submit([&] {
            for (int phase = 0; phase < k_phases; ++phase) {
                if (completed != phase) // every task sees the phases before it completed
                    wrong.fetch_add(1);
                sync.arrive_and_wait();
            }
        }));
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(completed, k_phases);
    EXPECT_EQ(wrong.load(), 0);
    if (fj_test::parks(pool)) {
        EXPECT_EQ(fj_test::spares_started(pool), 0u);
    }
}

TEST(fj_barrier, a_dropped_participant_is_not_waited_for_in_later_phases) {
    fj::scheduler pool(2);
    std::atomic<int> phases{0};
    fj::barrier sync(3, [&]() noexcept { phases.fetch_add(1); });
    fj::future<void> leaver = pool.submit([&] { sync.arrive_and_drop(); });
    std::vector<fj::future<void>> stayers;
    for (int i = 0; i < 2; ++i)
        stayers.push_back(pool.submit([&] {
            for (int phase = 0; phase < 5; ++phase)
                sync.arrive_and_wait();
        }));
    EXPECT_TRUE(fj_test::get_void(leaver));
    for (auto& t : stayers)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(phases.load(), 5);
}

TEST(fj_barrier, arrive_then_wait_and_bad_counts) {
    EXPECT_THROW(fj::barrier<>(-1), std::invalid_argument);
    fj::barrier<> two(2);
    auto token = two.arrive();
    std::thread other([&] { two.arrive_and_wait(); });
    two.wait(std::move(token));
    other.join();
    EXPECT_THROW((void)two.arrive(3), std::invalid_argument);
    EXPECT_THROW((void)two.arrive(0), std::invalid_argument);
}

} // namespace
