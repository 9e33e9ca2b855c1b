// co_await on the task-parking primitives (lock_async, lock_shared_async, wait_async,
// acquire_async, send_async, receive_async, arrive_and_wait_async, sleep_for_async), from fj::task
// and from a coroutine type of the program's own: mutual exclusion and hand-offs hold with
// coroutine waiters, parked tasks and blocked threads in the same queues, released by any of them;
// nothing free suspends.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <utility>
#include <vector>

#include <forkjoin/barrier.hpp>
#include <forkjoin/channel.hpp>
#include <forkjoin/condition_variable.hpp>
#include <forkjoin/latch.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/semaphore.hpp>
#include <forkjoin/shared_mutex.hpp>
#include <forkjoin/sync_await.hpp>
#include <forkjoin/task.hpp>
#include <forkjoin/this_task.hpp>

namespace {

// An eager coroutine that reports its end through a std::promise: not forkjoin's.
struct reporting {
    struct promise_type {
        std::promise<void> done;
        reporting get_return_object() { return {done.get_future()}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() { done.set_value(); }
        void unhandled_exception() { done.set_exception(std::current_exception()); }
    };
    std::future<void> done;
};

bool finished(reporting& r) {
    if (r.done.wait_for(fj_test::k_deadline) != std::future_status::ready) {
        ADD_FAILURE() << "the coroutine did not finish (lost resumption)";
        return false;
    }
    r.done.get();
    return true;
}

class co_await_sync : public fj_test::workers_test {};

// Increments under the mutex, with a suspension inside the critical section so that others
// queue behind it.
fj::task<void> add_under_lock(fj::mutex& m, long& counter, int rounds) {
    for (int i = 0; i < rounds; ++i) {
        std::unique_lock<fj::mutex> hold = co_await m.scoped_lock_async();
        const long seen = counter;
        if (i % 4 == 0)
            co_await fj::yield();
        counter = seen + 1;
    }
}

TEST_P(co_await_sync, a_mutex_excludes_coroutines_parked_tasks_and_threads_together) {
    fj::scheduler pool(workers());
    fj::mutex m;
    long counter = 0;
    const int rounds = fj_test::k_sanitized ? 100 : 500;
    std::vector<fj::future<void>> all;
    for (int c = 0; c < 6; ++c)
        all.push_back(fj::async(pool, add_under_lock(m, counter, rounds)));
    for (int t = 0; t < 3; ++t)
        all.push_back(pool.submit([&] {
            for (int i = 0; i < rounds; ++i) {
                std::lock_guard hold(m);
                ++counter;
            }
        }));
    std::thread outside([&] {
        for (int i = 0; i < rounds; ++i) {
            std::lock_guard hold(m);
            ++counter;
        }
    });
    for (auto& f : all)
        EXPECT_TRUE(fj_test::get_void(f));
    outside.join();
    EXPECT_EQ(counter, 10L * rounds);
}

// Writers increment with a suspension inside the critical section; readers check that the value
// does not change while they hold the lock, across a suspension.
fj::task<void> read_and_write(fj::shared_mutex& m, long& counter, std::atomic<int>& violations,
                              int rounds) {
    for (int i = 0; i < rounds; ++i) {
        if (i % 3 == 0) {
            co_await m.lock_async();
            const long seen = counter;
            if (i % 6 == 0)
                co_await fj::yield();
            counter = seen + 1;
            m.unlock();
        } else {
            co_await m.lock_shared_async();
            const long seen = counter;
            if (i % 4 == 1)
                co_await fj::yield();
            if (counter != seen)
                violations.fetch_add(1);
            m.unlock_shared();
        }
    }
}

TEST_P(co_await_sync, a_shared_mutex_serves_coroutines_parked_tasks_and_threads_together) {
    fj::scheduler pool(workers());
    fj::shared_mutex m;
    long counter = 0; // written under the exclusive lock
    std::atomic<int> violations{0};
    const int rounds = fj_test::k_sanitized ? 60 : 300; // a multiple of 3: rounds / 3 writes
    std::vector<fj::future<void>> all;
    for (int c = 0; c < 6; ++c)
        all.push_back(fj::async(pool, read_and_write(m, counter, violations, rounds)));
    auto blocking = [&] {
        for (int i = 0; i < rounds; ++i) {
            if (i % 3 == 0) {
                std::unique_lock hold(m);
                ++counter;
            } else {
                std::shared_lock hold(m);
                if (counter < 0)
                    violations.fetch_add(1);
            }
        }
    };
    for (int t = 0; t < 3; ++t)
        all.push_back(pool.submit(blocking));
    std::thread outside(blocking);
    for (auto& f : all)
        EXPECT_TRUE(fj_test::get_void(f));
    outside.join();
    EXPECT_EQ(counter, 10L * (rounds / 3));
    EXPECT_EQ(violations.load(), 0);
}

reporting lock_shared_then_note(fj::shared_mutex& m, std::thread::id& resumed_on) {
    co_await m.lock_shared_async();
    resumed_on = std::this_thread::get_id();
    m.unlock_shared();
}

TEST(co_await_sync_single, a_free_shared_mutex_does_not_suspend_and_a_held_one_hands_over) {
    fj::shared_mutex m;
    std::thread::id on;
    reporting r = lock_shared_then_note(m, on); // eager, and the lock is free: done already
    ASSERT_EQ(r.done.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(on, std::this_thread::get_id());
    // Held by a writer: the coroutine waits, and the unlock (on a plain thread) grants it the
    // lock; it resumes on a pool (the default scheduler: it waited on none).
    m.lock();
    reporting waiting = lock_shared_then_note(m, on);
    EXPECT_EQ(waiting.done.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
    std::thread unlocker([&] { m.unlock(); });
    unlocker.join();
    EXPECT_TRUE(finished(waiting));
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

reporting lock_then_note(fj::mutex& m, std::thread::id& resumed_on) {
    co_await m.lock_async();
    resumed_on = std::this_thread::get_id();
    m.unlock();
}

TEST(co_await_sync_single, a_free_primitive_does_not_suspend) {
    fj::mutex m;
    std::thread::id on;
    reporting r = lock_then_note(m, on); // eager, and the mutex is free: done already
    ASSERT_EQ(r.done.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(on, std::this_thread::get_id());
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(co_await_sync_single, a_coroutine_unlocked_by_a_thread_resumes_on_a_pool) {
    fj::mutex m;
    m.lock();
    std::thread::id on;
    reporting r = lock_then_note(m, on);
    EXPECT_EQ(r.done.wait_for(std::chrono::milliseconds(1)), std::future_status::timeout);
    std::thread([&] { m.unlock(); }).join(); // outside every pool: the default scheduler
    ASSERT_TRUE(finished(r));
    EXPECT_NE(on, std::this_thread::get_id());
}

reporting wait_latch(const fj::latch& l, std::atomic<int>& passed) {
    co_await l.wait_async();
    passed.fetch_add(1);
}

TEST_P(co_await_sync, a_latch_releases_coroutines_and_parked_tasks) {
    fj::scheduler pool(workers());
    fj::latch open(3);
    std::atomic<int> passed{0};
    std::vector<reporting> coroutines;
    for (int i = 0; i < 8; ++i)
        coroutines.push_back(wait_latch(open, passed));
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 4; ++i)
        tasks.push_back(pool.submit([&] {
            open.wait();
            passed.fetch_add(1);
        }));
    EXPECT_EQ(passed.load(), 0);
    open.count_down();
    pool.submit([&] { open.count_down(); }).get();
    std::thread([&] { open.count_down(); }).join();
    for (auto& c : coroutines)
        EXPECT_TRUE(finished(c));
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(passed.load(), 12);
    reporting late = wait_latch(open, passed); // open: does not suspend
    EXPECT_EQ(late.done.wait_for(std::chrono::seconds(0)), std::future_status::ready);
}

fj::task<void> hold_a_token(fj::counting_semaphore<>& s, std::atomic<int>& inside,
                            std::atomic<int>& most) {
    co_await s.acquire_async();
    const int now = inside.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    co_await fj::yield();
    inside.fetch_sub(1);
    s.release();
}

TEST_P(co_await_sync, a_semaphore_bounds_coroutines_and_tasks_together) {
    fj::scheduler pool(workers());
    fj::counting_semaphore<> s(2);
    std::atomic<int> inside{0}, most{0};
    std::vector<fj::future<void>> all;
    for (int i = 0; i < 40; ++i) {
        if (i % 3 == 0)
            all.push_back(pool.submit([&] {
                s.acquire();
                const int now = inside.fetch_add(1) + 1;
                int seen = most.load();
                while (now > seen && !most.compare_exchange_weak(seen, now)) {
                }
                inside.fetch_sub(1);
                s.release();
            }));
        else
            all.push_back(fj::async(pool, hold_a_token(s, inside, most)));
    }
    for (auto& f : all)
        EXPECT_TRUE(fj_test::get_void(f));
    EXPECT_LE(most.load(), 2);
    EXPECT_TRUE(s.try_acquire());
    EXPECT_TRUE(s.try_acquire());
    EXPECT_FALSE(s.try_acquire());
}

fj::task<long> sum_received(fj::channel<int>& ch) {
    long sum = 0;
    while (std::optional<int> v = co_await ch.receive_async())
        sum += *v;
    co_return sum;
}

fj::task<void> send_range(fj::channel<int>& ch, int from, int to) {
    for (int i = from; i < to; ++i)
        co_await ch.send_async(i);
}

TEST_P(co_await_sync, channels_carry_values_between_coroutines_tasks_and_threads) {
    for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}, std::size_t{4}}) {
        fj::scheduler pool(workers());
        fj::channel<int> ch(capacity);
        fj::future<long> coroutine_sum = fj::async(pool, sum_received(ch));
        fj::future<long> task_sum = pool.submit([&] {
            long sum = 0;
            while (std::optional<int> v = ch.receive())
                sum += *v;
            return sum;
        });
        fj::future<void> coroutine_sender = fj::async(pool, send_range(ch, 0, 300));
        std::thread thread_sender([&] {
            for (int i = 300; i < 600; ++i)
                ch.send(i);
        });
        EXPECT_TRUE(fj_test::get_void(coroutine_sender));
        thread_sender.join();
        ch.close();
        EXPECT_EQ(fj_test::get_or(coroutine_sum, -1L) + fj_test::get_or(task_sum, -1L),
                  599L * 600 / 2)
            << "capacity " << capacity;
    }
}

fj::task<bool> send_one(fj::channel<int>& ch) {
    try {
        co_await ch.send_async(1);
    } catch (const fj::channel_closed&) {
        co_return false;
    }
    co_return true;
}

TEST(co_await_sync_single, close_releases_awaiting_senders_and_receivers) {
    fj::scheduler pool(2);
    fj::channel<int> ch(0);
    fj::future<bool> sent = fj::async(pool, send_one(ch));
    fj::channel<int> empty(1);
    fj::future<long> received = fj::async(pool, sum_received(empty));
    std::this_thread::sleep_for(std::chrono::milliseconds(2)); // usually both wait by now
    ch.close();
    empty.close();
    EXPECT_FALSE(fj_test::get_or(sent, true));
    EXPECT_EQ(fj_test::get_or(received, -1L), 0L);
    fj::future<bool> after_close = fj::async(pool, send_one(ch)); // throws without waiting
    EXPECT_FALSE(fj_test::get_or(after_close, true));
}

fj::task<void> phases(fj::barrier<>& b, std::atomic<int>& arrived, int rounds,
                      std::atomic<bool>& out_of_step) {
    for (int r = 0; r < rounds; ++r) {
        arrived.fetch_add(1);
        co_await b.arrive_and_wait_async();
        if (arrived.load() < 4 * (r + 1))
            out_of_step = true;
    }
}

TEST_P(co_await_sync, a_barrier_holds_coroutines_and_tasks_to_the_phase) {
    fj::scheduler pool(workers());
    fj::barrier<> b(4);
    std::atomic<int> arrived{0};
    std::atomic<bool> out_of_step{false};
    const int rounds = 20;
    std::vector<fj::future<void>> all;
    for (int i = 0; i < 2; ++i)
        all.push_back(fj::async(pool, phases(b, arrived, rounds, out_of_step)));
    for (int i = 0; i < 2; ++i)
        all.push_back(pool.submit([&] {
            for (int r = 0; r < rounds; ++r) {
                arrived.fetch_add(1);
                b.arrive_and_wait();
                if (arrived.load() < 4 * (r + 1))
                    out_of_step = true;
            }
        }));
    for (auto& f : all)
        EXPECT_TRUE(fj_test::get_void(f));
    EXPECT_FALSE(out_of_step.load());
    EXPECT_EQ(arrived.load(), 4 * rounds);
}

fj::task<int> take_job(fj::mutex& m, fj::condition_variable& cv, std::vector<int>& jobs) {
    std::unique_lock<fj::mutex> lock = co_await m.scoped_lock_async();
    while (jobs.empty())
        co_await cv.wait_async(lock);
    const int job = jobs.back();
    jobs.pop_back();
    co_return job;
}

TEST_P(co_await_sync, a_condition_variable_wakes_coroutines_with_the_lock_held) {
    fj::scheduler pool(workers());
    fj::mutex m;
    fj::condition_variable cv;
    std::vector<int> jobs;
    std::vector<fj::future<int>> takers;
    for (int i = 0; i < 8; ++i)
        takers.push_back(fj::async(pool, take_job(m, cv, jobs)));
    std::thread producer([&] {
        for (int j = 1; j <= 8; ++j) {
            {
                std::lock_guard hold(m);
                jobs.push_back(j);
            }
            if (j % 2 == 0)
                cv.notify_one();
            else
                cv.notify_all();
        }
    });
    int sum = 0;
    for (auto& t : takers)
        sum += fj_test::get_or(t, -100);
    producer.join();
    EXPECT_EQ(sum, 36);
    EXPECT_TRUE(jobs.empty());
}

fj::task<std::size_t> sleep_then_where(std::chrono::milliseconds d,
                                       std::chrono::steady_clock::duration& slept) {
    const auto start = std::chrono::steady_clock::now();
    co_await fj::this_task::sleep_for_async(d);
    slept = std::chrono::steady_clock::now() - start;
    co_return fj::current_worker_index();
}

TEST(co_await_sync_single, a_sleep_resumes_after_its_time_on_the_pool_it_slept_on) {
    fj::scheduler pool(2);
    fj::scheduler other(1); // the default scheduler is a third pool: it must not be used
    std::chrono::steady_clock::duration slept{};
    fj::future<std::size_t> where =
        fj::async(pool, sleep_then_where(std::chrono::milliseconds(5), slept));
    EXPECT_LT(fj_test::get_or(where, fj::not_a_worker), pool.worker_count());
    EXPECT_GE(slept, std::chrono::milliseconds(5));
    std::chrono::steady_clock::duration none{};
    fj::future<std::size_t> at_once =
        fj::async(pool, sleep_then_where(std::chrono::milliseconds(0), none));
    EXPECT_LT(fj_test::get_or(at_once, fj::not_a_worker), pool.worker_count());
    (void)other;
}

INSTANTIATE_TEST_SUITE_P(workers, co_await_sync, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
