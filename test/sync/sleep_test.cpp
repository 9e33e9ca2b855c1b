// fj::this_task::sleep_for / sleep_until: sleeping tasks leave their workers free.
#include "sync/sync_support.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include <forkjoin/condition_variable.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/this_task.hpp>

namespace {

using namespace std::chrono_literals;

TEST(fj_sleep, sleeping_tasks_park_and_each_sleeps_at_least_its_time) {
    fj::scheduler pool(2);
    std::atomic<int> short_sleeps{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 8; ++i)
        tasks.push_back(pool.submit([&] {
            const auto began = std::chrono::steady_clock::now();
            fj::this_task::sleep_for(30ms);
            if (std::chrono::steady_clock::now() - began < 30ms)
                short_sleeps.fetch_add(1);
        }));
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(short_sleeps.load(), 0);
    if (fj_test::parks(pool)) {
        EXPECT_GE(fj_test::parks_so_far(pool), 8u);
        EXPECT_EQ(fj_test::spares_started(pool), 0u);
    }
}

TEST(fj_sleep, off_the_pool_and_with_other_clocks_it_sleeps_the_thread) {
    const auto began = std::chrono::steady_clock::now();
    fj::this_task::sleep_for(5ms);
    fj::this_task::sleep_until(std::chrono::system_clock::now() + 5ms);
    EXPECT_GE(std::chrono::steady_clock::now() - began, 10ms);
    fj::this_task::sleep_for(-1ms); // returns at once
    fj::this_task::sleep_until(std::chrono::steady_clock::now() - 1s);
}

TEST(fj_sleep, a_short_sleep_on_a_task_and_one_already_due) {
    fj::scheduler pool(1);
    fj::future<void> t = pool.submit([] {
        const auto began = std::chrono::steady_clock::now();
        fj::this_task::sleep_for(1ns);
        fj::this_task::sleep_until(began); // in the past
        fj::this_task::sleep_for(2ms);
        EXPECT_GE(std::chrono::steady_clock::now() - began, 2ms);
    });
    EXPECT_TRUE(fj_test::get_void(t));
}

// Many deadlines at once on the process's timer thread: sleeps that fire in any order, and timed
// waits that a notify ends first, so that their timers are disarmed before (or while) they fire.
TEST(fj_sleep, many_deadlines_fire_or_are_disarmed_in_any_order) {
    fj::scheduler pool(2);
    fj::mutex m;
    fj::condition_variable cv;
    int notified = 0; // guarded by m
    std::atomic<int> short_sleeps{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 200; ++i) {
        if (i % 2 == 0) {
            tasks.push_back(pool.submit([&, i] {
                const auto length = std::chrono::microseconds(100 * (i % 7));
                const auto began = std::chrono::steady_clock::now();
                fj::this_task::sleep_for(length);
                if (std::chrono::steady_clock::now() - began < length)
                    short_sleeps.fetch_add(1);
            }));
        } else {
            tasks.push_back(pool.submit([&, i] {
                std::unique_lock lock(m);
                (void)cv.wait_for(lock, std::chrono::microseconds(50 * (i % 11)),
                                  [&] { return notified > 0; });
            }));
        }
        if (i == 100) {
            {
                std::lock_guard hold(m);
                ++notified;
            }
            cv.notify_all();
        }
    }
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(short_sleeps.load(), 0);
}

} // namespace
