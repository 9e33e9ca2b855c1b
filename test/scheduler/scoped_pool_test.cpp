// scheduler::execute(f): f runs as a task of the pool, and inside it every free function and
// algorithm uses that pool; outside every pool they use the default scheduler, even when the
// program has created exactly one pool of its own (the rule of oneTBB and rayon: which pool a call
// uses depends on where it is made, never on which pools exist).
#include "support.hpp"

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>

namespace {

class scoped_pool_test : public fj_test::guarded_test {};

TEST_F(scoped_pool_test, execute_returns_the_result_and_rethrows) {
    fj::scheduler pool(2);
    EXPECT_EQ(pool.execute([] { return 42; }), 42);
    int x = 0;
    int& r = pool.execute([&x]() -> int& { return x; });
    EXPECT_EQ(&r, &x);
    bool ran = false;
    pool.execute([&ran] { ran = true; });
    EXPECT_TRUE(ran);
    EXPECT_THROW(pool.execute([]() -> int { throw std::runtime_error("inside"); }),
                 std::runtime_error);
}

TEST_F(scoped_pool_test, inside_execute_the_free_functions_use_the_pool) {
    fj::scheduler pool(2);
    pool.execute([&pool] {
        EXPECT_EQ(&fj::current_scheduler(), &pool);
        EXPECT_TRUE(pool.on_worker_thread());
        std::atomic<int> on_pool{0}, elsewhere{0};
        fj::parallel_for(
            0, 1000, [&](int) { (pool.on_worker_thread() ? on_pool : elsewhere).fetch_add(1); });
        EXPECT_EQ(on_pool.load(), 1000);
        EXPECT_EQ(elsewhere.load(), 0);
        auto f = fj::async([&pool] { return pool.on_worker_thread(); });
        EXPECT_TRUE(f.get());
    });
}

TEST_F(scoped_pool_test, outside_every_pool_the_free_functions_use_the_default_scheduler) {
    fj::scheduler pool(1); // the program's only pool of its own
    EXPECT_EQ(&fj::current_scheduler(), &fj::default_scheduler());
    std::atomic<int> on_pool{0};
    fj::parallel_for(0, 1000, [&](int) {
        if (pool.on_worker_thread())
            on_pool.fetch_add(1);
    });
    EXPECT_EQ(on_pool.load(), 0);
    auto f = fj::async([&pool] { return pool.on_worker_thread(); });
    EXPECT_FALSE(f.get());
}

TEST_F(scoped_pool_test, execute_inside_the_pool_calls_directly) {
    fj::scheduler pool(1);
    // From a task of the pool, a nested execute that queued and waited would still finish (the
    // wait parks), but it runs in place: the same thread, no task.
    const auto tasks_before = pool.stats().total().tasks_run;
    const bool same_thread =
        pool.submit([&pool] {
                const auto outer = std::this_thread::get_id();
                return pool.execute([outer] { return std::this_thread::get_id() == outer; });
            })
            .get();
    EXPECT_TRUE(same_thread);
    EXPECT_EQ(pool.stats().total().tasks_run, tasks_before + 1);
}

TEST_F(scoped_pool_test, execute_from_a_task_of_another_pool) {
    fj::scheduler inner(2);
    fj::scheduler outer(1);
    auto f = outer.submit([&inner] {
        return inner.execute([&inner] { return &fj::current_scheduler() == &inner; });
    });
    EXPECT_TRUE(fj_test::get_or(f, false));
}

TEST_F(scoped_pool_test, bad_calls_are_refused_before_anything_runs) {
    fj::scheduler pool(1);
    std::function<int()> empty;
    EXPECT_THROW(pool.execute(empty), std::invalid_argument);
    pool.shutdown();
    bool ran = false;
    EXPECT_THROW(pool.execute([&ran] { ran = true; }), fj::scheduler_closed);
    EXPECT_FALSE(ran);
}

} // namespace
