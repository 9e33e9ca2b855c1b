// fj::task: lazy coroutine tasks that fork and join on a pool, at 1-4 workers: results equal the
// serial ones, exceptions reach the awaiting task and the future, branches run in parallel on
// other workers, resume_on moves to another pool, yield lets queued work run first.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include <forkjoin/await.hpp>
#include <forkjoin/task.hpp>

namespace {

// get_or for a future that is a temporary.
template <class T>
T result_or(fj::future<T>&& f, T fallback) {
    return fj_test::get_or(f, fallback);
}

fj::task<long> fib(int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await fj::join(fib(n - 1), fib(n - 2));
    co_return a + b;
}

long serial_fib(int n) {
    return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

class fj_task : public fj_test::workers_test {};

TEST_P(fj_task, fib_with_join_matches_the_serial_result) {
    fj::scheduler pool(workers());
    const int n = fj_test::k_sanitized ? 18 : 24;
    EXPECT_EQ(result_or(fj::async(pool, fib(n)), -1L), serial_fib(n));
}

// Every leaf records the thread that ran it: with more than one worker and leaves that take a
// while, the branches offered to thieves run on other workers too.
fj::task<int> spread(int depth, std::mutex& m, std::set<std::thread::id>& threads) {
    if (depth == 0) {
        {
            std::lock_guard hold(m);
            threads.insert(std::this_thread::get_id());
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        co_return 1;
    }
    auto [a, b] = co_await fj::join(spread(depth - 1, m, threads), spread(depth - 1, m, threads));
    co_return a + b;
}

TEST_P(fj_task, joined_branches_are_stolen_by_idle_workers) {
    if (workers() < 2)
        GTEST_SKIP() << "one worker: nobody to steal";
    fj::scheduler pool(workers());
    std::mutex m;
    std::set<std::thread::id> threads;
    EXPECT_EQ(result_or(fj::async(pool, spread(6, m, threads)), 0), 64);
    EXPECT_GE(threads.size(), 2u);
}

fj::task<int> thrower(int value) {
    if (value < 0)
        throw std::invalid_argument("negative");
    co_return value;
}

fj::task<int> call_chain(int value) {
    const int v = co_await thrower(value); // a call: runs now, rethrows here
    co_return v * 2;
}

TEST_P(fj_task, a_child_s_value_and_exception_reach_the_awaiting_task_and_the_future) {
    fj::scheduler pool(workers());
    EXPECT_EQ(result_or(fj::async(pool, call_chain(21)), 0), 42);
    fj::future<int> failed = fj::async(pool, call_chain(-1));
    EXPECT_THROW(failed.get(), std::invalid_argument);

    auto both_fail = []() -> fj::task<int> {
        auto [a, b] = co_await fj::join(thrower(-1), thrower(-2));
        co_return a + b;
    };
    fj::future<int> first = fj::async(pool, both_fail());
    EXPECT_THROW(first.get(), std::invalid_argument);
}

TEST_P(fj_task, void_tasks_join_to_monostate) {
    fj::scheduler pool(workers());
    std::atomic<int> ran{0};
    auto count = [&]() -> fj::task<void> {
        ran.fetch_add(1);
        co_return;
    };
    auto both = [&]() -> fj::task<int> {
        auto [a, b] = co_await fj::join(count(), count());
        static_assert(std::is_same_v<decltype(a), std::monostate>);
        (void)a;
        (void)b;
        co_await count();
        co_return ran.load();
    };
    EXPECT_EQ(result_or(fj::async(pool, both()), 0), 3);
}

TEST_P(fj_task, a_task_awaits_futures_and_is_awaited_as_a_future) {
    fj::scheduler pool(workers());
    auto outer = [&]() -> fj::task<int> {
        const int x = co_await fj::async(pool, fib(10)); // a future, awaited inside a task
        const int y = co_await pool.submit([] { return 2; });
        co_return x* y;
    };
    EXPECT_EQ(result_or(fj::async(pool, outer()), 0), 110);
}

TEST(fj_task_pools, resume_on_moves_the_task_to_the_other_pool) {
    fj::scheduler first(1);
    fj::scheduler second(2);
    auto hop = [&]() -> fj::task<int> {
        const bool started_on_first = first.on_worker_thread();
        co_await fj::resume_on(second);
        const bool now_on_second = second.on_worker_thread();
        co_await fj::resume_on(second); // already there: no suspension
        co_return (started_on_first ? 1 : 0) + (now_on_second ? 2 : 0);
    };
    EXPECT_EQ(result_or(fj::async(first, hop()), 0), 3);
}

TEST(fj_task_pools, yield_lets_queued_work_run_first) {
    fj::scheduler pool(1);
    std::atomic<bool> other_ran{false};
    auto yielder = [&]() -> fj::task<bool> {
        (void)pool.submit([&] { other_ran.store(true); }); // queued behind this task
        co_await fj::yield();
        co_return other_ran.load();
    };
    EXPECT_TRUE(result_or(fj::async(pool, yielder()), false));
}

TEST(fj_task_pools, a_task_never_awaited_or_run_is_destroyed_unstarted) {
    std::atomic<bool> ran{false};
    {
        auto never = [&]() -> fj::task<void> {
            ran.store(true);
            co_return;
        };
        fj::task<void> t = never();
    }
    EXPECT_FALSE(ran.load());
}

// Random trees of joins whose leaves may throw: each tree's value, or that it threw, equals the
// serial evaluation's.
fj::task<long> tree(std::uint64_t seed, int depth) {
    fj_test::rng random(seed);
    if (depth == 0 || random.below(4) == 0) {
        if (random.below(50) == 0)
            throw std::runtime_error("leaf");
        co_return static_cast<long>(random.below(100));
    }
    auto [a, b] = co_await fj::join(tree(random.next(), depth - 1), tree(random.next(), depth - 1));
    co_return a + b + 1;
}

long serial_tree(std::uint64_t seed, int depth) {
    fj_test::rng random(seed);
    if (depth == 0 || random.below(4) == 0) {
        if (random.below(50) == 0)
            throw std::runtime_error("leaf");
        return static_cast<long>(random.below(100));
    }
    const std::uint64_t left = random.next();
    const std::uint64_t right = random.next();
    const long a = serial_tree(left, depth - 1); // a's exception first, as the join
    const long b = serial_tree(right, depth - 1);
    return a + b + 1;
}

TEST_P(fj_task, random_join_trees_match_their_serial_evaluation) {
    fj::scheduler pool(workers());
    for (std::uint64_t seed = 1; seed <= fj_test::scaled(200); ++seed) {
        long expected = -1;
        try {
            expected = serial_tree(seed, 10);
        } catch (const std::runtime_error&) {
        }
        fj::future<long> f = fj::async(pool, tree(seed, 10));
        long got = -1;
        try {
            got = f.get();
        } catch (const std::runtime_error&) {
        }
        EXPECT_EQ(got, expected) << "seed " << seed;
    }
}

// A first branch that forks a plain task and ends without joining it: the fork runs all the same,
// and the join still completes.
TEST_P(fj_task, a_branch_may_leave_a_fork_behind) {
    fj::scheduler pool(workers());
    std::atomic<int> forks_ran{0};
    auto leaves_a_fork = [&]() -> fj::task<int> {
        (void)fj::fork([&] { forks_ran.fetch_add(1); });
        co_return 1;
    };
    auto parent = [&]() -> fj::task<int> {
        int sum = 0;
        for (int i = 0; i < 50; ++i) {
            auto [a, b] = co_await fj::join(leaves_a_fork(), fib(5));
            sum += a + static_cast<int>(b);
        }
        co_return sum;
    };
    EXPECT_EQ(result_or(fj::async(pool, parent()), 0), 50 * 6);
    EXPECT_TRUE(fj_test::spin_until([&] { return forks_ran.load() == 50; }));
}

INSTANTIATE_TEST_SUITE_P(workers, fj_task, fj_test::worker_counts(), fj_test::worker_count_name);

} // namespace
