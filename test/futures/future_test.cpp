// fj::future<T>: values of every shape (move-only, void, references), timed waits, readiness,
// dropping without get(), and std::future_error(no_state) on every use of an empty future.
#include "support.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>

namespace {

using namespace std::chrono_literals;

class future_test : public fj_test::workers_test {};

// get() returns the task's value, and leaves the future empty.
TEST_P(future_test, GetReturnsValueAndEmptiesFuture) {
    fj::scheduler sched(workers());
    fj::future<int> f = sched.submit([] { return 42; });
    EXPECT_TRUE(f.valid());
    EXPECT_EQ(fj_test::get_or(f, -1), 42);
    EXPECT_FALSE(f.valid());
}

// A void task's future becomes ready once the task has run, and get() returns nothing.
TEST_P(future_test, VoidFuture) {
    fj::scheduler sched(workers());
    std::atomic<bool> ran{false};
    fj::future<void> f = sched.submit([&] { ran.store(true); });
    static_assert(std::is_same_v<decltype(f.get()), void>);
    ASSERT_TRUE(fj_test::get_void(f));
    EXPECT_TRUE(ran.load()); // ordered by the future's completion edge
}

// A move-only result (std::unique_ptr) and a move-only capture travel through the future.
TEST_P(future_test, MoveOnlyResultAndCapture) {
    fj::scheduler sched(workers());
    auto f = sched.submit([p = std::make_unique<int>(7)]() mutable { return std::move(p); });
    static_assert(std::is_same_v<decltype(f), fj::future<std::unique_ptr<int>>>);
    ASSERT_TRUE(fj_test::wait_ready(f));
    std::unique_ptr<int> p = f.get();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(*p, 7);
}

// A task returning a reference gives a future<T&> that refers to the same object.
TEST_P(future_test, ReferenceResultRefersToSameObject) {
    fj::scheduler sched(workers());
    int target = 5;
    auto f = sched.submit([&target]() -> int& { return target; });
    static_assert(std::is_same_v<decltype(f), fj::future<int&>>);
    ASSERT_TRUE(fj_test::wait_ready(f));
    int& r = f.get();
    EXPECT_EQ(&r, &target);
    r = 9;
    EXPECT_EQ(target, 9);
}

// A result type with no default constructor and a non-trivial destructor round-trips.
TEST_P(future_test, NonDefaultConstructibleResult) {
    struct value {
        explicit value(std::string s) : text(std::move(s)) {}
        std::string text;
    };
    fj::scheduler sched(workers());
    auto f = sched.submit([] { return value(std::string(100, 'x')); });
    ASSERT_TRUE(fj_test::wait_ready(f));
    EXPECT_EQ(f.get().text, std::string(100, 'x'));
}

// Captures too big for the task block cache, and over-aligned ones, are stored and freed correctly.
TEST_P(future_test, LargeAndOverAlignedCaptures) {
    fj::scheduler sched(workers());
    std::array<int, 1024> big{};
    for (int i = 0; i < 1024; ++i)
        big[static_cast<std::size_t>(i)] = i;
    auto f1 = sched.submit([big] {
        long sum = 0;
        for (int v : big)
            sum += v;
        return sum;
    });
    struct alignas(64) aligned {
        int v = 3;
    };
    auto f2 = sched.submit(
        [a = aligned{}] { return (reinterpret_cast<std::uintptr_t>(&a) % 64 == 0) ? a.v : -1; });
    EXPECT_EQ(fj_test::get_or(f1, -1L), 1023L * 1024 / 2);
    EXPECT_EQ(fj_test::get_or(f2, -2), 3) << "over-aligned capture misaligned";
}

// wait_for() off the pool returns timeout while the task is blocked, then ready once it finishes;
// is_ready() agrees with it.
TEST_P(future_test, WaitForTimesOutThenReady) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    auto f = sched.submit([&] {
        fj_test::spin_until([&] { return release.load(); });
        return 1;
    });
    EXPECT_EQ(f.wait_for(10ms), std::future_status::timeout);
    EXPECT_FALSE(f.is_ready());
    EXPECT_EQ(f.wait_until(std::chrono::system_clock::now() + 5ms), std::future_status::timeout);
    release.store(true);
    EXPECT_EQ(f.wait_for(fj_test::k_deadline), std::future_status::ready);
    EXPECT_TRUE(f.is_ready());
    EXPECT_EQ(f.wait_for(0ms), std::future_status::ready);
    EXPECT_EQ(f.get(), 1);
}

// wait_for() on a worker (which helps while it waits) also times out and then sees ready. The
// awaited task runs on another scheduler so the waiting worker cannot pick it up itself.
TEST_P(future_test, WaitForOnWorkerTimesOutThenReady) {
    fj::scheduler sched(workers());
    fj::scheduler other(1);
    std::atomic<bool> release{false};
    auto outer = sched.submit([&] {
        auto f = other.submit([&] {
            fj_test::spin_until([&] { return release.load(); });
            return 2;
        });
        const std::future_status first = f.wait_for(10ms);
        release.store(true);
        const std::future_status second = f.wait_for(fj_test::k_deadline);
        return std::pair{first, second == std::future_status::ready ? f.get() : -1};
    });
    ASSERT_TRUE(fj_test::wait_ready(outer));
    const auto [first, value] = outer.get();
    EXPECT_EQ(first, std::future_status::timeout);
    EXPECT_EQ(value, 2);
}

// is_ready() eventually turns true without anyone waiting.
TEST_P(future_test, IsReadyBecomesTrueWithoutWaiting) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] { return 3; });
    EXPECT_TRUE(fj_test::spin_until([&] { return f.is_ready(); }));
    EXPECT_EQ(f.get(), 3);
}

// Dropping a future without get() neither blocks nor cancels: the destructor returns while the
// task is still blocked, and the task runs to completion afterwards.
TEST_P(future_test, DroppedFutureDoesNotBlockAndTaskStillRuns) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    std::atomic<bool> saw_release{false};
    std::atomic<bool> finished{false};
    {
        auto f = sched.submit([&] {
            saw_release.store(fj_test::spin_until([&] { return release.load(); }));
            finished.store(true);
        });
    } // ~future: must not wait for the task (which waits for `release`, set only below)
    release.store(true);
    EXPECT_TRUE(fj_test::spin_until([&] { return finished.load(); })) << "dropped task never ran";
    EXPECT_TRUE(saw_release.load()) << "~future blocked until the task gave up waiting";
}

// Move-assigning over a pending future detaches the old one (no block, its task still runs) and
// leaves the source empty.
TEST_P(future_test, MoveAssignOverPendingFuture) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    std::atomic<bool> first_ran{false};
    auto f = sched.submit([&] {
        fj_test::spin_until([&] { return release.load(); });
        first_ran.store(true);
        return 1;
    });
    auto g = sched.submit([] { return 2; });
    f = std::move(g);
    EXPECT_FALSE(g.valid()); // NOLINT(bugprone-use-after-move): testing the moved-from state
    release.store(true);
    EXPECT_EQ(fj_test::get_or(f, -1), 2);
    EXPECT_TRUE(fj_test::spin_until([&] { return first_ran.load(); }));
}

// A future outlives its scheduler: after shutdown drained the task, get() still returns the value,
// and an unread future destroyed after its scheduler frees its state (checked by ASan).
TEST_P(future_test, FutureOutlivesScheduler) {
    fj::future<std::string> kept;
    fj::future<std::string> dropped;
    {
        fj::scheduler sched(workers());
        kept = sched.submit([] { return std::string(64, 'k'); });
        dropped = sched.submit([] { return std::string(64, 'd'); });
    }
    ASSERT_TRUE(kept.is_ready()) << "shutdown returned before the task ran";
    EXPECT_EQ(kept.get(), std::string(64, 'k'));
    EXPECT_TRUE(dropped.is_ready());
}

// Many futures waited on inside a task (the waiting worker helps meanwhile) all get their values.
TEST_P(future_test, ManyFuturesWaitedOnWorker) {
    fj::scheduler sched(workers());
    auto outer = sched.submit([] {
        std::vector<fj::future<int>> fs;
        for (int i = 0; i < 1000; ++i)
            fs.push_back(fj::fork([i] { return i; }));
        long sum = 0;
        for (auto& f : fs)
            sum += f.get();
        return sum;
    });
    EXPECT_EQ(fj_test::get_or(outer, -1L), 999L * 1000 / 2);
}

INSTANTIATE_TEST_SUITE_P(Workers, future_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

class empty_future_test : public fj_test::guarded_test {};

template <class F>
void expect_no_state(F&& use, const char* what) {
    try {
        use();
        ADD_FAILURE() << what << " on an empty future did not throw";
    } catch (const std::future_error& e) {
        EXPECT_EQ(e.code(), std::make_error_code(std::future_errc::no_state)) << what;
    } catch (...) {
        ADD_FAILURE() << what << " threw something other than std::future_error";
    }
}

// Every operation on an empty future (default-constructed, moved-from, or already read) throws
// std::future_error with std::future_errc::no_state.
TEST_F(empty_future_test, EveryUseThrowsNoState) {
    fj::future<int> empty;
    EXPECT_FALSE(empty.valid());
    expect_no_state([&] { (void)empty.get(); }, "get()");
    expect_no_state([&] { empty.wait(); }, "wait()");
    expect_no_state([&] { (void)empty.wait_for(1ms); }, "wait_for()");
    expect_no_state([&] { (void)empty.wait_until(std::chrono::steady_clock::now()); },
                    "wait_until()");
    expect_no_state([&] { (void)empty.is_ready(); }, "is_ready()");

    fj::future<void> empty_void;
    expect_no_state([&] { empty_void.get(); }, "get() on future<void>");

    fj::scheduler sched(1);
    auto f = sched.submit([] { return 1; });
    auto moved = std::move(f);
    EXPECT_FALSE(f.valid()); // NOLINT(bugprone-use-after-move)
    expect_no_state([&] { (void)f.get(); }, "get() after move");
    EXPECT_EQ(fj_test::get_or(moved, -1), 1);
    expect_no_state([&] { (void)moved.get(); }, "a second get()");
}

} // namespace
