// fj::task_group: every task run is waited for, from any thread or task; the first exception
// reaches wait() and cancels what has not started; cancel() skips unstarted tasks; a group
// destroyed without wait() cancels, waits and says so; bad calls change nothing.
#include "support.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

class task_group_test : public fj_test::workers_test {
protected:
    fj::scheduler make_pool(std::size_t max_spares = 256) const {
        fj::scheduler_options o;
        o.workers = workers();
        o.max_spare_workers = max_spares;
        return fj::scheduler(o);
    }
};

// An unbalanced tree (a node at depth d has (d * 7 + seed) % 4 children, down to depth 9), one
// task per node, every task run on the same group: the shape of the OpenMP task benchmarks.
void visit(fj::task_group& group, std::atomic<long>& nodes, int depth, unsigned seed) {
    nodes.fetch_add(1, std::memory_order_relaxed);
    if (depth == 9)
        return;
    const unsigned children = (static_cast<unsigned>(depth) * 7 + seed) % 4;
    for (unsigned c = 0; c < children; ++c)
        group.run([&group, &nodes, depth, seed, c] { visit(group, nodes, depth + 1, seed + c); });
}

long count_serially(int depth, unsigned seed) {
    long n = 1;
    if (depth == 9)
        return n;
    const unsigned children = (static_cast<unsigned>(depth) * 7 + seed) % 4;
    for (unsigned c = 0; c < children; ++c)
        n += count_serially(depth + 1, seed + c);
    return n;
}

TEST_P(task_group_test, every_task_run_from_outside_is_waited_for) {
    fj::scheduler pool = make_pool();
    fj::task_group group(pool);
    std::atomic<int> ran{0};
    for (int i = 0; i < 1000; ++i)
        group.run([&ran] { ran.fetch_add(1); });
    group.wait();
    EXPECT_EQ(ran.load(), 1000);
    // Reusable.
    group.run([&ran] { ran.fetch_add(1); });
    group.wait();
    EXPECT_EQ(ran.load(), 1001);
}

TEST_P(task_group_test, a_tree_of_tasks_run_from_inside_tasks) {
    fj::scheduler pool = make_pool();
    std::atomic<long> nodes{0};
    const long expected = count_serially(0, 3);
    pool.execute([&] {
        fj::task_group group; // the current scheduler: pool
        group.run([&] { visit(group, nodes, 0, 3); });
        group.wait();
    });
    EXPECT_EQ(nodes.load(), expected);
}

TEST_P(task_group_test, the_first_exception_reaches_wait_and_the_group_is_reusable) {
    fj::scheduler pool = make_pool();
    fj::task_group group(pool);
    std::atomic<int> ran{0};
    for (int i = 0; i < 200; ++i)
        group.run([&ran, i] {
            ran.fetch_add(1);
            if (i % 50 == 7)
                throw std::runtime_error("task " + std::to_string(i));
        });
    EXPECT_THROW(group.wait(), std::runtime_error);
    EXPECT_GE(ran.load(), 1);
    EXPECT_FALSE(group.is_canceling()); // wait() ends the cancellation the exception caused
    ran = 0;
    group.run([&ran] { ran.fetch_add(1); });
    EXPECT_NO_THROW(group.wait());
    EXPECT_EQ(ran.load(), 1);
}

TEST_P(task_group_test, cancel_skips_the_tasks_not_started) {
    fj::scheduler pool = make_pool(0); // no spare may take the queued tasks
    std::atomic<bool> release{false};
    std::atomic<int> busy{0}, ran{0};
    fj::task_group group(pool);
    // Occupy every worker (spinning, so it is running, not blocked), then queue more.
    for (std::size_t w = 0; w < workers(); ++w)
        group.run([&] {
            busy.fetch_add(1);
            while (!release.load())
                std::this_thread::yield();
        });
    ASSERT_TRUE(fj_test::spin_until([&] { return busy.load() == int(workers()); }));
    for (int i = 0; i < 100; ++i)
        group.run([&ran] { ran.fetch_add(1); });
    group.cancel();
    EXPECT_TRUE(group.is_canceling());
    release = true;
    group.wait();
    EXPECT_EQ(ran.load(), 0);
    EXPECT_FALSE(group.is_canceling());
}

TEST_P(task_group_test, waits_inside_tasks_park_and_tasks_run_from_many_threads) {
    fj::scheduler pool = make_pool();
    std::atomic<int> ran{0};
    // Several outside threads run on one group; then a task of the pool is its one waiter.
    fj::task_group group(pool);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 200; ++i)
                group.run([&ran] { ran.fetch_add(1); });
        });
    for (auto& t : threads)
        t.join();
    auto waiter = pool.submit([&group] { group.wait(); });
    EXPECT_TRUE(fj_test::get_void(waiter));
    EXPECT_EQ(ran.load(), 600);
}

TEST_P(task_group_test, thousands_of_runs_from_one_task_all_happen) {
    fj::scheduler pool = make_pool();
    std::atomic<int> ran{0};
    pool.execute([&] {
        fj::task_group group;
        for (int i = 0; i < 5000; ++i) // the deque grows to hold them all
            group.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
        group.wait();
    });
    EXPECT_EQ(ran.load(), 5000);
}

// oneTBB code may hold a lock around run() that the task takes: run() must only queue, however
// long the queue. A task that ran inside run() would find the flag set on its own thread (and is
// counted instead of taking the lock, which would deadlock).
thread_local bool t_inside_run = false;

TEST_P(task_group_test, run_never_calls_the_task_so_a_lock_held_around_it_cannot_deadlock) {
    fj::scheduler pool = make_pool();
    std::mutex lock;
    long total = 0;
    std::atomic<int> ran_inside_run{0};
    constexpr int k_tasks = 2000;
    pool.execute([&] {
        fj::task_group group;
        std::unique_lock<std::mutex> held(lock);
        for (int i = 0; i < k_tasks; ++i) {
            t_inside_run = true;
            group.run([&, i] {
                if (t_inside_run) {
                    ran_inside_run.fetch_add(1);
                    return;
                }
                std::lock_guard<std::mutex> mine(lock);
                total += i;
            });
            t_inside_run = false;
        }
        held.unlock();
        group.wait();
    });
    EXPECT_EQ(ran_inside_run.load(), 0);
    EXPECT_EQ(total, long{k_tasks} * (k_tasks - 1) / 2);
}

// oneTBB's fractal makes its groups as members, before its arenas, and calls run() inside
// arena.execute: a group made without a scheduler queues where run() is called.
TEST_P(task_group_test, a_group_made_outside_a_pool_runs_on_the_pool_where_run_is_called) {
    fj::task_group group; // made on the test's thread, outside every pool
    fj::scheduler pool = make_pool();
    fj::scheduler other(1);
    std::atomic<int> on_pool{0}, on_other{0}, elsewhere{0};
    auto record = [&] {
        fj::scheduler* s = &fj::current_scheduler();
        (s == &pool ? on_pool : s == &other ? on_other : elsewhere).fetch_add(1);
    };
    pool.execute([&] {
        for (int i = 0; i < 50; ++i)
            group.run(record);
        group.wait();
    });
    other.execute([&] {
        for (int i = 0; i < 20; ++i)
            group.run(record);
        group.wait();
    });
    EXPECT_EQ(on_pool.load(), 50);
    EXPECT_EQ(on_other.load(), 20);
    EXPECT_EQ(elsewhere.load(), 0);
}

TEST_P(task_group_test, a_group_made_with_a_scheduler_stays_on_it) {
    fj::scheduler pool = make_pool();
    fj::scheduler other(1);
    fj::task_group group(pool);
    std::atomic<int> on_pool{0};
    other.execute([&] {
        for (int i = 0; i < 30; ++i)
            group.run([&] {
                if (&fj::current_scheduler() == &pool)
                    on_pool.fetch_add(1);
            });
        group.wait();
    });
    EXPECT_EQ(on_pool.load(), 30);
}

TEST_P(task_group_test, a_group_destroyed_without_wait_cancels_waits_and_throws) {
    fj::scheduler pool = make_pool();
    std::atomic<int> finished{0};
    try {
        fj::task_group group(pool);
        for (int i = 0; i < 50; ++i)
            group.run([&finished] {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
                finished.fetch_add(1);
            });
        // no wait()
    } catch (const fj::missing_wait& e) {
        EXPECT_NE(std::string(e.what()).find("without wait()"), std::string::npos);
        const int at_throw = finished.load();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        EXPECT_EQ(finished.load(), at_throw); // nothing ran after the destructor returned
        return;
    }
    ADD_FAILURE() << "no fj::missing_wait";
}

TEST_P(task_group_test, a_group_destroyed_while_unwinding_does_not_throw_again) {
    fj::scheduler pool = make_pool();
    std::atomic<int> finished{0};
    try {
        fj::task_group group(pool);
        group.run([&finished] { finished.fetch_add(1); });
        throw std::runtime_error("leaving the scope early");
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "leaving the scope early");
    }
    EXPECT_LE(finished.load(), 1);
}

TEST_P(task_group_test, bad_calls_change_nothing) {
    fj::scheduler pool = make_pool();
    fj::task_group group(pool);
    std::function<void()> empty;
    EXPECT_THROW(group.run(empty), std::invalid_argument);
    void (*null_function)() = nullptr;
    EXPECT_THROW(group.run(null_function), std::invalid_argument);
    group.wait(); // nothing was queued
    pool.shutdown();
    EXPECT_THROW(group.run([] {}), fj::scheduler_closed);
    EXPECT_NO_THROW(group.wait()); // the refused task is not waited for
}

INSTANTIATE_TEST_SUITE_P(workers, task_group_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
