// fj::condition_variable: parked consumers, notify_one / notify_all, timeouts, stop requests.
#include "sync/sync_support.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include <forkjoin/condition_variable.hpp>
#include <forkjoin/mutex.hpp>

namespace {

using namespace std::chrono_literals;

TEST(fj_condition_variable, consumers_wait_as_parked_tasks_and_each_gets_one_item) {
    fj::scheduler pool(2);
    fj::mutex m;
    fj::condition_variable ready;
    std::deque<int> items; // guarded by m
    std::atomic<int> waiting{0};
    std::vector<fj::future<int>> consumers;
    for (int i = 0; i < 8; ++i)
        consumers.push_back(pool.submit([&] {
            std::unique_lock lock(m);
            waiting.fetch_add(1);
            ready.wait(lock, [&] { return !items.empty(); });
            const int item = items.front();
            items.pop_front();
            return item;
        }));
    // With parking, all 8 wait at once on 2 workers, and no spare thread is needed.
    EXPECT_TRUE(fj_test::spin_until([&] { return waiting.load() == 8; }));
    for (int i = 1; i <= 8; ++i) {
        {
            std::lock_guard hold(m);
            items.push_back(i);
        }
        ready.notify_one();
    }
    int sum = 0;
    for (auto& c : consumers)
        sum += fj_test::get_or(c, 0);
    EXPECT_EQ(sum, 36);
    if (fj_test::parks(pool)) {
        EXPECT_EQ(fj_test::spares_started(pool), 0u);
    }
}

TEST(fj_condition_variable, notify_all_wakes_every_waiter_task_or_thread) {
    fj::scheduler pool(2);
    fj::mutex m;
    fj::condition_variable go;
    bool flag = false; // guarded by m
    std::atomic<int> waiting{0};
    auto waiter = [&] {
        std::unique_lock lock(m);
        waiting.fetch_add(1);
        go.wait(lock, [&] { return flag; });
    };
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 6; ++i)
        tasks.push_back(pool.submit(waiter));
    std::thread thread(waiter);
    EXPECT_TRUE(fj_test::spin_until([&] { return waiting.load() == 7; }));
    {
        std::lock_guard hold(m);
        flag = true;
    }
    go.notify_all();
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    thread.join();
}

TEST(fj_condition_variable, timed_waits_time_out_on_a_task_and_on_a_thread) {
    fj::scheduler pool(2);
    fj::condition_variable never;
    auto check = [&](auto& mutex) {
        std::unique_lock lock(mutex);
        const auto began = std::chrono::steady_clock::now();
        EXPECT_EQ(never.wait_for(lock, 20ms), std::cv_status::timeout);
        EXPECT_GE(std::chrono::steady_clock::now() - began, 20ms);
        EXPECT_TRUE(lock.owns_lock());
        EXPECT_FALSE(never.wait_for(lock, 1ms, [] { return false; }));
        EXPECT_TRUE(
            never.wait_until(lock, std::chrono::system_clock::now() + 1ms, [] { return true; }));
    };
    fj::mutex fj_m;
    std::mutex std_m;
    fj::future<void> on_task = pool.submit([&] {
        check(fj_m);
        check(std_m); // any lock with lock() and unlock()
    });
    EXPECT_TRUE(fj_test::get_void(on_task));
    std::thread on_thread([&] { check(fj_m); });
    on_thread.join();
}

TEST(fj_condition_variable, a_stop_request_ends_the_wait_with_the_predicate_s_value) {
    fj::scheduler pool(2);
    fj::mutex m;
    fj::condition_variable never;
    std::stop_source source;
    std::atomic<int> waiting{0};
    fj::future<bool> waiter = pool.submit([&] {
        std::unique_lock lock(m);
        waiting.fetch_add(1);
        return never.wait(lock, source.get_token(), [] { return false; });
    });
    EXPECT_TRUE(fj_test::spin_until([&] { return waiting.load() == 1; }));
    source.request_stop();
    EXPECT_FALSE(fj_test::get_or(waiter, true));
    // Already stopped: returns at once.
    std::unique_lock lock(m);
    EXPECT_FALSE(never.wait_for(lock, source.get_token(), 60s, [] { return false; }));
}

} // namespace
