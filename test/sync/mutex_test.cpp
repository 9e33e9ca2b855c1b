// fj::mutex: mutual exclusion, parking instead of blocking, arrival order, timed and try forms.
#include "sync/sync_support.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <forkjoin/mutex.hpp>
#include <forkjoin/parallel_for.hpp>

namespace {

using namespace std::chrono_literals;

TEST(fj_mutex, tasks_waiting_for_a_held_mutex_park_and_leave_their_workers_free) {
    fj::scheduler pool(2);
    fj::mutex m;
    std::atomic<int> started{0};
    int counter = 0; // guarded by m
    m.lock();
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 20; ++i)
        tasks.push_back(pool.submit([&] {
            started.fetch_add(1);
            std::lock_guard hold(m);
            ++counter;
        }));
    if (fj_test::parks(pool)) {
        // Every task starts although 2 workers and the lock is held: the waiters are parked.
        EXPECT_TRUE(fj_test::spin_until([&] { return started.load() == 20; }));
        fj_test::expect_parks_reach(pool, 20);
        EXPECT_EQ(fj_test::spares_started(pool), 0u);
        EXPECT_EQ(pool.stats().total().sync_parks, 20u); // each parked on the mutex
    }
    m.unlock();
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    std::lock_guard hold(m);
    EXPECT_EQ(counter, 20);
}

class fj_mutex_workers : public fj_test::workers_test {};

TEST_P(fj_mutex_workers, excludes_tasks_and_threads_from_each_other) {
    fj::scheduler pool(workers());
    fj::mutex m;
    long counter = 0;    // guarded by m
    bool inside = false; // guarded by m: set while someone is in the critical section
    std::atomic<int> overlaps{0};
    auto critical = [&] {
        std::lock_guard hold(m);
        if (inside)
            overlaps.fetch_add(1);
        inside = true;
        ++counter;
        inside = false;
    };
    std::vector<std::thread> outside;
    for (int t = 0; t < 2; ++t)
        outside.emplace_back([&] {
            for (int i = 0; i < 300; ++i)
                critical();
        });
    fj::parallel_for(pool, 0, 2'000, [&](int) { critical(); });
    for (auto& t : outside)
        t.join();
    EXPECT_EQ(counter, 2'600);
    EXPECT_EQ(overlaps.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(workers, fj_mutex_workers, fj_test::worker_counts(),
                         fj_test::worker_count_name);

TEST(fj_mutex, queued_waiters_get_it_in_arrival_order) {
    fj::scheduler pool(1);
    if (!fj_test::parks(pool))
        GTEST_SKIP() << "parking is off: the order of blocked threads is not observable here";
    fj::mutex m;
    std::vector<int> order; // guarded by m
    m.lock();
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 8; ++i) {
        tasks.push_back(pool.submit([&, i] {
            std::lock_guard hold(m);
            order.push_back(i);
        }));
        fj_test::expect_parks_reach(pool, static_cast<std::uint64_t>(i) + 1); // queued, in order
    }
    m.unlock(); // wakes the first waiter; with no newcomer, each unlock wakes the next in turn
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    std::lock_guard hold(m);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// A thread that keeps taking the mutex while tasks wait for it (barging) does not starve them:
// each waiter, having lost a few times, has the mutex handed over to it.
TEST(fj_mutex, waiters_are_not_starved_by_a_thread_that_keeps_taking_it) {
    fj::scheduler pool(2);
    fj::mutex m;
    std::atomic<bool> stop{false};
    std::atomic<int> done{0};
    std::thread greedy([&] {
        while (!stop.load()) {
            std::lock_guard hold(m);
            std::this_thread::yield(); // holds it a while: waiters mostly find it held
        }
    });
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 8; ++i)
        tasks.push_back(pool.submit([&] {
            for (int k = 0; k < 20; ++k) {
                std::lock_guard hold(m);
            }
            done.fetch_add(1);
        }));
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    stop.store(true);
    greedy.join();
    EXPECT_EQ(done.load(), 8);
}

TEST(fj_mutex, try_lock_and_the_timed_forms_on_a_task_and_on_a_thread) {
    fj::scheduler pool(2);
    fj::mutex m;
    m.lock();
    auto timed_out_after = [&](auto timeout) {
        const auto began = std::chrono::steady_clock::now();
        const bool got = m.try_lock_for(timeout);
        EXPECT_FALSE(got);
        return std::chrono::steady_clock::now() - began;
    };
    fj::future<void> on_task = pool.submit([&] {
        EXPECT_FALSE(m.try_lock());
        EXPECT_GE(timed_out_after(20ms), 20ms);
        EXPECT_FALSE(m.try_lock_until(std::chrono::system_clock::now() + 5ms));
    });
    EXPECT_TRUE(fj_test::get_void(on_task));
    std::thread on_thread([&] { EXPECT_GE(timed_out_after(20ms), 20ms); });
    on_thread.join();

    // A timed wait that the unlock ends: the waiter gets the mutex.
    const std::uint64_t parks_before = fj_test::parks_so_far(pool);
    fj::future<bool> waiter = pool.submit([&] {
        const bool got = m.try_lock_for(std::chrono::seconds(60));
        if (got)
            m.unlock();
        return got;
    });
    if (fj_test::parks(pool))
        fj_test::expect_parks_reach(pool, parks_before + 1);
    m.unlock();
    EXPECT_TRUE(fj_test::get_or(waiter, false));
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(fj_mutex, a_task_may_unlock_what_another_thread_locked) {
    fj::scheduler pool(2);
    fj::mutex m;
    m.lock();
    fj::future<void> unlocker = pool.submit([&] { m.unlock(); });
    EXPECT_TRUE(fj_test::get_void(unlocker));
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(fj_mutex, timed_out_waiters_leave_the_queue_and_the_rest_still_get_it) {
    fj::scheduler pool(2);
    fj::mutex m;
    int counter = 0; // guarded by m
    m.lock();
    std::vector<fj::future<bool>> tasks;
    for (int i = 0; i < 6; ++i)
        tasks.push_back(pool.submit([&, i] {
            // Odd tasks give up after 1 ms; even ones wait as long as it takes.
            const bool got = i % 2 != 0 ? m.try_lock_for(1ms) : (m.lock(), true);
            if (got) {
                ++counter;
                m.unlock();
            }
            return got;
        }));
    std::this_thread::sleep_for(30ms); // lets the odd ones time out (or not: either is right)
    m.unlock();
    int got = 0;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const bool t = fj_test::get_or(tasks[i], false);
        if (i % 2 == 0) {
            EXPECT_TRUE(t);
        }
        got += t ? 1 : 0;
    }
    std::lock_guard hold(m);
    EXPECT_EQ(counter, got);
}

} // namespace
