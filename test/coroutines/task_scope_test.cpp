// fj::task_scope: any number of children spawned by a task and joined together. Every child
// runs once and has ended when the join returns; the first exception comes out of the join and
// the others are dropped; an empty or finished scope does not suspend; a scope is reusable; one
// destroyed after spawn() without a join aborts with a message.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <forkjoin/task.hpp>
#include <forkjoin/task_scope.hpp>

namespace {

class fj_task_scope : public fj_test::workers_test {};

fj::task<void> add(std::atomic<long>& sum, long v) {
    sum.fetch_add(v, std::memory_order_relaxed);
    co_return;
}

fj::task<long> spawn_and_join(int children) {
    std::atomic<long> sum{0};
    fj::task_scope scope;
    for (int i = 1; i <= children; ++i)
        scope.spawn(add(sum, i));
    co_await scope.join();
    co_return sum.load(std::memory_order_relaxed); // every child has ended: all counted
}

TEST_P(fj_task_scope, every_child_has_ended_when_the_join_returns) {
    fj::scheduler pool(workers());
    for (const int children : {0, 1, 2, 100, 2000}) {
        fj::future<long> f = fj::async(pool, spawn_and_join(children));
        EXPECT_EQ(fj_test::get_or(f, -1L), long{children} * (children + 1) / 2);
    }
}

// A tree: each node spawns a dynamic number of children (depth-dependent), sums them through
// its own scope.
fj::task<void> tree(int depth, std::atomic<long>& leaves) {
    if (depth == 0) {
        leaves.fetch_add(1, std::memory_order_relaxed);
        co_return;
    }
    fj::task_scope scope;
    for (int i = 0; i < depth + 1; ++i)
        scope.spawn(tree(depth - 1, leaves));
    co_await scope.join();
}

TEST_P(fj_task_scope, nested_scopes_run_a_tree) {
    fj::scheduler pool(workers());
    std::atomic<long> leaves{0};
    fj::future<void> f = fj::async(pool, tree(fj_test::k_sanitized ? 5 : 6, leaves));
    EXPECT_TRUE(fj_test::get_void(f));
    EXPECT_EQ(leaves.load(), fj_test::k_sanitized ? 720L : 5040L); // (depth + 1)!
}

fj::task<void> note_thread(std::mutex& m, std::set<std::thread::id>& threads) {
    {
        std::lock_guard hold(m);
        threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    co_return;
}

fj::task<void> spread(std::mutex& m, std::set<std::thread::id>& threads) {
    fj::task_scope scope;
    for (int i = 0; i < 64; ++i)
        scope.spawn(note_thread(m, threads));
    co_await scope.join();
}

TEST(fj_task_scope_single, children_are_offered_to_idle_workers) {
    fj::scheduler pool(2);
    std::mutex m;
    std::set<std::thread::id> threads;
    fj::future<void> f = fj::async(pool, spread(m, threads));
    EXPECT_TRUE(fj_test::get_void(f));
    EXPECT_EQ(threads.size(), 2u);
}

fj::task<void> fail(int i) {
    if (i % 3 == 0)
        throw std::runtime_error("child " + std::to_string(i));
    co_return;
}

fj::task<int> first_failure_then_reuse() {
    fj::task_scope scope;
    for (int i = 0; i < 30; ++i)
        scope.spawn(fail(i));
    int caught = 0;
    try {
        co_await scope.join();
    } catch (const std::runtime_error& e) {
        caught = std::string(e.what()).rfind("child ", 0) == 0 ? 1 : -1;
    }
    // Reusable, and the dropped exceptions do not come back.
    std::atomic<long> sum{0};
    for (int i = 0; i < 10; ++i)
        scope.spawn(add(sum, 1));
    co_await scope.join();
    co_await scope.join(); // nothing spawned since: does not suspend
    co_return sum.load() == 10 ? caught : -2;
}

TEST_P(fj_task_scope, the_first_exception_comes_out_of_the_join_and_the_scope_is_reusable) {
    fj::scheduler pool(workers());
    fj::future<int> f = fj::async(pool, first_failure_then_reuse());
    EXPECT_EQ(fj_test::get_or(f, -3), 1);
}

fj::task<void> spawn_without_join() {
    fj::task_scope scope;
    scope.spawn(fail(1));
    co_return;
}

TEST(fj_task_scope_death, a_scope_destroyed_without_join_aborts_with_a_message) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            fj::scheduler pool(1);
            fj::async(pool, spawn_without_join()).get();
        },
        "fj::task_scope destroyed after spawn\\(\\) without co_await join\\(\\)");
}

INSTANTIATE_TEST_SUITE_P(workers, fj_task_scope, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
