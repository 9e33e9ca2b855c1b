// fj::this_task::sleep_for / sleep_until: sleeping tasks leave their workers free.
#include "sync/sync_support.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
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

// The timer thread sleeps towards the earliest deadline armed; a later arm of an earlier deadline
// (here on another worker, so in another shard on most machines) must wake it. A lost wake-up
// leaves the short wait asleep until the hour-long one's deadline: the check gives up after 30 s
// and ends both waits by hand.
TEST(fj_sleep, an_earlier_deadline_armed_after_a_later_one_fires_on_time) {
    fj::scheduler pool(2);
    fj::mutex m;
    fj::condition_variable long_cv;
    fj::condition_variable short_cv;
    bool done = false;    // guarded by m
    bool give_up = false; // guarded by m
    fj::future<void> long_wait = pool.submit([&] {
        std::unique_lock lock(m);
        (void)long_cv.wait_for(lock, 1h, [&] { return done; });
    });
    if (fj_test::parks(pool)) {
        // The long timer armed and the timer thread gone to sleep towards it (best effort: the
        // order only makes the check sharper).
        const auto until = std::chrono::steady_clock::now() + 5s;
        while (fj_test::parks_so_far(pool) < 1 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(1ms);
        std::this_thread::sleep_for(5ms);
    }
    fj::future<void> short_wait = pool.submit([&] {
        std::unique_lock lock(m);
        (void)short_cv.wait_for(lock, 2ms, [&] { return give_up; });
        done = true;
        long_cv.notify_all();
    });
    const bool on_time = short_wait.wait_for(30s) == std::future_status::ready;
    EXPECT_TRUE(on_time) << "a 2 ms timed wait armed after a 1 h one did not end within 30 s";
    {
        std::lock_guard lock(m);
        give_up = true;
        done = true;
    }
    short_cv.notify_all();
    long_cv.notify_all();
    EXPECT_TRUE(fj_test::get_void(short_wait));
    EXPECT_TRUE(fj_test::get_void(long_wait));
}

} // namespace
