// get() outside every pool on a task still queued runs the task on the calling thread, as one of
// its pool's callers (docs/design/callers.md#take-over): where it runs, what it sees, its result
// and exception, and that every task runs exactly once when takers race the workers.
#include "support.hpp"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

class take_over_test : public fj_test::workers_test {
protected:
    // The take-over applies to pools whose waiting tasks do not park: a taken task's waits would
    // block the caller's thread where a worker's park.
    fj::scheduler_options not_parking() const {
        fj::scheduler_options options;
        options.workers = workers();
        options.park_waiting_tasks = false;
        return options;
    }
};

// Rounds of submit and get() on an idle pool, each begun once every worker sleeps (a worker spins
// about 50 µs before it sleeps); `body` runs as the task and says whether it ran on the thread
// that called get(). Returns how many rounds did, stopping at 5: a worker's wake-up takes tens of
// µs and a take-over a few, so one round in two to five here, unless the take-over is gone. Up to
// 1,000 rounds: on a machine loaded by other tests a worker may not get to sleep within a round's
// 1 ms, or its wake-up may preempt the taker, for many rounds in a row.
template <class Body>
int rounds_taken_over(fj::scheduler& pool, Body body) {
    int taken = 0;
    for (int round = 0; round < 1'000 && taken < 5; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const std::thread::id me = std::this_thread::get_id();
        fj::future<bool> f =
            pool.submit([&body, me] { return body(std::this_thread::get_id() == me); });
        if (f.get())
            ++taken;
    }
    return taken;
}

// The caller runs the task it waits for when every worker sleeps: no wake-up to wait for.
TEST_P(take_over_test, get_runs_a_queued_task_on_the_calling_thread_when_the_workers_sleep) {
    fj::scheduler pool(not_parking());
    EXPECT_GT(rounds_taken_over(pool, [](bool here) { return here; }), 0);
}

// The taken task runs as a task of its pool: it sees the pool, and what it forks and calls runs
// there; its slot is a caller's.
TEST_P(take_over_test, a_taken_task_runs_in_its_pool) {
    fj::scheduler pool(not_parking());
    std::atomic<int> wrong{0};
    const int taken = rounds_taken_over(pool, [&](bool here) {
        if (here &&
            (&fj::current_scheduler() != &pool || fj::current_worker_index() < pool.worker_count()))
            wrong.fetch_add(1);
        auto [a, b] = fj::join([] { return 20L; }, [] { return 22L; });
        const long sum = fj::parallel_reduce(
            0L, 1000L, 0L, [](long i) { return i; }, std::plus<>{});
        if (a + b + sum != 42 + 499'500)
            wrong.fetch_add(1);
        return here;
    });
    EXPECT_GT(taken, 0);
    EXPECT_EQ(wrong.load(), 0);
}

// An exception reaches get() whoever ran the task.
TEST_P(take_over_test, a_taken_tasks_exception_reaches_get) {
    fj::scheduler pool(not_parking());
    for (int round = 0; round < 50; ++round) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        fj::future<int> f = pool.submit([]() -> int { throw std::runtime_error("taken"); });
        EXPECT_THROW(f.get(), std::runtime_error);
        EXPECT_FALSE(f.valid());
    }
}

// std::launch::async alone: as if on a new thread, so never on the one that calls get(); the
// default policy (async | deferred) lets get() run it.
TEST_P(take_over_test, std_launch_async_alone_always_runs_on_a_worker) {
    fj::scheduler pool(not_parking());
    int taken = 0;
    for (int round = 0; round < 50; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const std::thread::id me = std::this_thread::get_id();
        fj::future<bool> f = pool.execute([me] {
            return fj::async(
                std::launch::async, [me](int) { return std::this_thread::get_id() == me; }, 0);
        });
        taken += f.get() ? 1 : 0;
    }
    EXPECT_EQ(taken, 0);
}

// A continuation waits for its antecedent: get() never runs it ahead of it, even while every
// worker sleeps.
TEST_P(take_over_test, a_continuation_is_not_taken_before_its_antecedent) {
    fj::scheduler pool(not_parking());
    fj::promise<int> promise;
    fj::future<int> first = promise.get_future();
    fj::future<int> second = pool.execute([&] { return first.then([](int v) { return v + 1; }); });
    std::thread setter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        promise.set_value(1);
    });
    EXPECT_EQ(second.get(), 2);
    setter.join();
}

// Outside threads getting their own tasks race the workers that pop them: each task runs once,
// and each get() returns its task's value, whoever ran it.
TEST_P(take_over_test, takers_racing_workers_run_each_task_once) {
    fj::scheduler pool(not_parking());
    constexpr int k_threads = 3;
    const int per_thread = fj_test::k_sanitized ? 200 : 2'000;
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(k_threads * per_thread));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < k_threads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                const int id = t * per_thread + i;
                fj::future<int> f = pool.submit([&runs, id] {
                    runs[static_cast<std::size_t>(id)].fetch_add(1);
                    return id;
                });
                if (i % 3 == 0)
                    std::this_thread::yield(); // sometimes a worker gets there first
                if (f.get() != id)
                    wrong.fetch_add(1);
            }
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(wrong.load(), 0);
    for (const auto& r : runs)
        ASSERT_EQ(r.load(), 1);
}

// A cancelled task is not taken: it never runs, and get() throws.
TEST_P(take_over_test, a_cancelled_task_is_not_taken) {
    fj::scheduler pool(not_parking());
    std::atomic<bool> release{false};
    auto blockers = fj_test::occupy_workers(pool, release);
    std::atomic<bool> ran{false};
    fj::future<void> f = pool.submit([&] { ran.store(true); });
    EXPECT_TRUE(f.cancel());
    EXPECT_THROW(f.get(), fj::task_cancelled);
    release.store(true);
    for (auto& b : blockers)
        EXPECT_TRUE(fj_test::get_void(b));
    pool.shutdown();
    EXPECT_FALSE(ran.load());
}

// A pool whose waiting tasks park never takes a task over: the task might wait on a channel, a
// latch or a future, and on the caller's stack that wait would block the thread where on a worker
// it parks and the worker goes on (a pipeline of tasks joined by channels then ran up to 7 times
// slower when get() took one of its stages).
TEST_P(take_over_test, a_pool_that_parks_waiting_tasks_never_takes_a_task_over) {
    fj::scheduler_options options;
    options.workers = workers();
    options.park_waiting_tasks = true;
    fj::scheduler pool(options);
    if (!pool.stats().parking)
        GTEST_SKIP() << "parking is off (FJ_PARKING=0)";
    int taken = 0;
    for (int round = 0; round < 100; ++round) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        const std::thread::id me = std::this_thread::get_id();
        fj::future<bool> f = pool.submit([me] { return std::this_thread::get_id() == me; });
        taken += f.get() ? 1 : 0;
    }
    EXPECT_EQ(taken, 0);
}

INSTANTIATE_TEST_SUITE_P(workers, take_over_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
