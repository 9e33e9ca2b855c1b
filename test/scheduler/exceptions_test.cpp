// Exceptions thrown by tasks are captured per task and rethrown where the result is collected
// (future::get, join), unchanged in type and message, and nothing is swallowed or terminates.
#include "support.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct custom_error {
    int code;
};

class exceptions_test : public fj_test::workers_test {};

// get() rethrows the task's exception with its type and message.
TEST_P(exceptions_test, GetRethrowsTaskException) {
    fj::scheduler sched(workers());
    auto f = sched.submit([]() -> int { throw std::out_of_range("task failed: 17"); });
    ASSERT_TRUE(fj_test::wait_ready(f));
    try {
        (void)f.get();
        FAIL() << "get() did not throw";
    } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "task failed: 17");
    }
    EXPECT_FALSE(f.valid()); // get() consumed the state even though it threw
}

// Exceptions of non-std types and from void tasks propagate too.
TEST_P(exceptions_test, NonStdAndVoidTaskExceptions) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] { throw custom_error{42}; });
    ASSERT_TRUE(fj_test::wait_ready(f));
    try {
        f.get();
        FAIL() << "get() did not throw";
    } catch (const custom_error& e) {
        EXPECT_EQ(e.code, 42);
    }
    auto g = sched.submit([]() -> int& { throw 7; });
    ASSERT_TRUE(fj_test::wait_ready(g));
    EXPECT_THROW((void)g.get(), int);
}

// An exception crosses several levels of fork/get and reaches the caller outside the pool.
int throw_at_leaf(int depth) {
    if (depth == 0)
        throw std::runtime_error("leaf");
    auto left = fj::fork([depth] { return throw_at_leaf(depth - 1); });
    auto [a, b] = fj::join([] { return 1; }, [depth] { return depth; });
    return left.get() + a + b;
}

TEST_P(exceptions_test, PropagatesThroughNestedForks) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] { return throw_at_leaf(12); });
    ASSERT_TRUE(fj_test::wait_ready(f));
    EXPECT_THROW((void)f.get(), std::runtime_error);
}

// join rethrows the first branch's exception, the second branch's exception, and when both
// throw, the first branch's.
TEST_P(exceptions_test, JoinRethrowsBranchExceptions) {
    fj::scheduler sched(workers());
    auto first = sched.submit([] {
        return fj::join([]() -> int { throw std::runtime_error("a"); }, [] { return 2; }).second;
    });
    auto second = sched.submit([] {
        return fj::join([] { return 1; }, []() -> int { throw std::runtime_error("b"); }).first;
    });
    auto both = sched.submit([] {
        fj::join([] { throw std::runtime_error("a"); }, [] { throw std::logic_error("b"); });
    });
    const auto message_of = [](auto& f) -> std::string {
        if (!fj_test::wait_ready(f))
            return "hang";
        try {
            (void)f.get();
            return "no exception";
        } catch (const std::exception& e) {
            return e.what();
        }
    };
    EXPECT_EQ(message_of(first), "a");
    EXPECT_EQ(message_of(second), "b");
    EXPECT_EQ(message_of(both), "a");
    // The same from outside the pool (join runs as one task there).
    EXPECT_THROW(sched.join([] { throw std::runtime_error("a"); }, [] {}), std::runtime_error);
}

// A join whose first branch throws after its second branch was stolen waits for the stolen
// branch to finish (it references the joining frame) before rethrowing.
class stolen_join_test : public fj_test::workers_test {};
TEST_P(stolen_join_test, JoinWaitsForStolenSecondBranchBeforeRethrow) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] {
        std::atomic<bool> b_started{false};
        std::atomic<bool> b_finished{false};
        bool b_finished_at_rethrow = false;
        bool stolen = false;
        try {
            fj::join(
                [&] {
                    // Not helping: only a thief can start b.
                    stolen = fj_test::spin_until([&] { return b_started.load(); });
                    throw std::runtime_error("a");
                },
                [&] {
                    b_started.store(true);
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    b_finished.store(true);
                });
        } catch (const std::runtime_error&) {
            b_finished_at_rethrow = b_finished.load();
        }
        return std::pair{stolen, b_finished_at_rethrow};
    });
    ASSERT_TRUE(fj_test::wait_ready(f));
    const auto [stolen, waited] = f.get();
    EXPECT_TRUE(stolen) << "no worker stole the second branch";
    EXPECT_TRUE(waited) << "join rethrew while the stolen branch was still running";
}
INSTANTIATE_TEST_SUITE_P(Workers, stolen_join_test, fj_test::multi_worker_counts(),
                         fj_test::worker_count_name);

// With one worker (nobody can steal), a join whose first branch throws does not start the second.
TEST(single_worker_join_test, FailedFirstBranchCancelsUnstartedSecond) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler sched(1);
    std::atomic<bool> b_ran{false};
    // From a task on the worker: a join from this thread would run on it as a caller, and the
    // worker could steal the second branch (docs/design/callers.md).
    auto f = sched.submit(
        [&] { sched.join([] { throw std::runtime_error("a"); }, [&] { b_ran.store(true); }); });
    f.wait(); // not get() alone: it could run the task here (take-over)
    EXPECT_THROW(f.get(), std::runtime_error);
    EXPECT_FALSE(b_ran.load());
}

// A task whose future was dropped may throw: the exception is discarded, nothing terminates, and
// the scheduler keeps working.
TEST_P(exceptions_test, DroppedFutureExceptionIsDiscarded) {
    fj::scheduler sched(workers());
    std::atomic<int> thrown{0};
    for (int i = 0; i < 100; ++i)
        sched.submit([&] {
            thrown.fetch_add(1);
            throw std::runtime_error("nobody listens");
        });
    auto f = sched.submit([] { return 5; });
    EXPECT_EQ(fj_test::get_or(f, -1), 5);
    sched.shutdown();
    EXPECT_EQ(thrown.load(), 100);
}

// A task run by an outside thread (try_run_one) that throws stores its exception for get().
TEST_P(exceptions_test, ExceptionFromTaskRunByOutsideHelper) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    std::vector<fj::future<void>> blockers = fj_test::occupy_workers(sched, release);
    auto f = sched.submit([]() -> int { throw std::domain_error("helped"); });
    EXPECT_TRUE(sched.try_run_one()); // must not throw here
    release.store(true);
    ASSERT_TRUE(f.is_ready());
    EXPECT_THROW((void)f.get(), std::domain_error);
    for (auto& b : blockers)
        fj_test::get_void(b);
}

// A callable whose copy throws makes submit() throw that exception; nothing is queued or leaked
// (ASan), and the scheduler keeps working.
TEST_P(exceptions_test, ThrowingCopyOfCallableFailsSubmitCleanly) {
    struct throwing_copy {
        throwing_copy() = default;
        throwing_copy(const throwing_copy&) { throw std::bad_alloc(); }
        int operator()() const { return 1; }
    };
    fj::scheduler sched(workers());
    throwing_copy callable;
    EXPECT_THROW(sched.submit(callable), std::bad_alloc);
    auto f = sched.submit([] { return 2; });
    EXPECT_EQ(fj_test::get_or(f, -1), 2);
}

INSTANTIATE_TEST_SUITE_P(Workers, exceptions_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
