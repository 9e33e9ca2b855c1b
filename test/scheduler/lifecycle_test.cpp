// Scheduler lifecycle: create/destroy in loops, shutdown drains everything accepted (including
// work that tasks add while it drains), later submits throw, shutdown is idempotent and refuses
// to run from the scheduler's own tasks, and the default scheduler serves the main thread.
#include "support.hpp"

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

namespace {

class lifecycle_test : public fj_test::workers_test {};

// Hundreds of schedulers can be created, used and destroyed in a row without leaking threads or
// memory (ASan) or hanging in the destructor (watchdog).
TEST_P(lifecycle_test, CreateUseDestroyManySchedulers) {
    const std::size_t rounds = fj_test::scaled(300);
    long sum = 0;
    for (std::size_t i = 0; i < rounds; ++i) {
        fj::scheduler sched(workers());
        auto f = sched.submit([i] { return static_cast<long>(i); });
        sum += fj_test::get_or(f, 0L);
    }
    EXPECT_EQ(sum, static_cast<long>(rounds * (rounds - 1) / 2));
}

// A scheduler that never ran anything shuts down (its workers are asleep or spinning).
TEST_P(lifecycle_test, IdleSchedulerShutsDown) {
    for (std::size_t i = 0; i < fj_test::scaled(50); ++i) {
        fj::scheduler sched(workers());
        if (i % 2 == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(200)); // let them sleep
    }
    SUCCEED(); // the property is that the loop above returns (the watchdog fails it otherwise)
}

// A pool declared first and sized later (oneTBB's `task_arena a; a.initialize(n);`): a
// std::optional<fj::scheduler> starts no thread until emplace(n), and can be emptied and sized
// again (docs/coming-from-tbb.md).
TEST_P(lifecycle_test, OptionalSchedulerSizedLater) {
    std::optional<fj::scheduler> pool;
    EXPECT_FALSE(pool.has_value());
    for (std::size_t size : {workers(), workers() + 1}) {
        pool.emplace(size);
        EXPECT_EQ(pool->worker_count(), size);
        const long sum = pool->execute([&] {
            EXPECT_EQ(&fj::current_scheduler(), &*pool);
            std::atomic<long> total{0};
            fj::parallel_for(0L, 1000L, [&](long i) { total.fetch_add(i); });
            return total.load();
        });
        EXPECT_EQ(sum, 999L * 1000L / 2);
        pool.reset(); // shuts the pool down and joins its workers
    }
}

// shutdown() runs every task accepted before it, 100k of them with their futures dropped.
TEST_P(lifecycle_test, ShutdownDrainsEverythingQueued) {
    const std::size_t n = fj_test::scaled(100'000);
    std::atomic<std::size_t> ran{0};
    fj::scheduler sched(workers());
    for (std::size_t i = 0; i < n; ++i)
        sched.submit([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    sched.shutdown();
    EXPECT_EQ(ran.load(), n) << "shutdown() returned with accepted tasks not run";
}

// Work that tasks add while the scheduler drains (forks and submits to their own scheduler, in
// a chain) still runs before shutdown() returns.
TEST_P(lifecycle_test, TasksMayAddWorkWhileDraining) {
    constexpr int chain = 200;
    std::atomic<int> ran{0};
    fj::scheduler sched(workers());
    struct link {
        static void run(fj::scheduler& s, std::atomic<int>& ran, int left) {
            ran.fetch_add(1);
            if (left == 0)
                return;
            // Alternate submit and fork; neither may throw scheduler_closed from inside the pool.
            if (left % 2 == 0)
                s.submit([&s, &ran, left] { run(s, ran, left - 1); });
            else
                fj::fork([&s, &ran, left] { run(s, ran, left - 1); });
        }
    };
    sched.submit([&] { link::run(sched, ran, chain); });
    sched.shutdown();
    EXPECT_EQ(ran.load(), chain + 1);
}

// After shutdown() began, submitting from outside the pool throws fj::scheduler_closed, through
// every entry point, and is_closed() reports it; the scheduler is not otherwise disturbed.
TEST_P(lifecycle_test, SubmitAfterShutdownThrows) {
    fj::scheduler sched(workers());
    EXPECT_FALSE(sched.is_closed());
    sched.shutdown();
    EXPECT_TRUE(sched.is_closed());
    EXPECT_THROW(sched.submit([] { return 1; }), fj::scheduler_closed);
    EXPECT_THROW(sched.fork([] {}), fj::scheduler_closed);
    EXPECT_THROW(fj::async(sched, [] {}), fj::scheduler_closed);
    EXPECT_THROW(sched.join([] {}, [] {}), fj::scheduler_closed);
    // scheduler_closed is a std::runtime_error with a message.
    try {
        sched.submit([] {});
        ADD_FAILURE() << "no throw";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("shutdown"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(sched.try_run_one());
}

// shutdown() may be called repeatedly, concurrently from two threads, and before the destructor.
TEST_P(lifecycle_test, ShutdownIsIdempotentAndThreadSafe) {
    fj::scheduler sched(workers());
    std::atomic<int> ran{0};
    for (int i = 0; i < 1000; ++i)
        sched.submit([&] { ran.fetch_add(1); });
    std::thread other([&] { sched.shutdown(); });
    sched.shutdown();
    other.join();
    sched.shutdown();
    EXPECT_EQ(ran.load(), 1000);
}

// shutdown() called from one of the scheduler's own tasks throws std::logic_error (it would wait
// for itself), both on a worker and on an outside thread running the task via try_run_one().
TEST_P(lifecycle_test, ShutdownFromOwnTaskThrowsLogicError) {
    fj::scheduler sched(workers());
    const auto attempt = [&] {
        try {
            sched.shutdown();
            return std::string("returned");
        } catch (const std::logic_error&) {
            return std::string("logic_error");
        } catch (...) {
            return std::string("other exception");
        }
    };
    auto on_worker = sched.submit(attempt);
    EXPECT_EQ(fj_test::get_or(on_worker, std::string("hang")), "logic_error");
    EXPECT_FALSE(sched.is_closed());

    std::atomic<bool> release{false};
    std::vector<fj::future<void>> blockers = fj_test::occupy_workers(sched, release);
    auto helped = sched.submit(attempt);
    EXPECT_TRUE(sched.try_run_one()); // the main thread runs it
    release.store(true);
    EXPECT_EQ(fj_test::get_or(helped, std::string("hang")), "logic_error");
    EXPECT_FALSE(sched.is_closed());
    for (auto& b : blockers)
        fj_test::get_void(b);
}

// A thread blocked in future::get() on a task is released when shutdown drains that task.
TEST_P(lifecycle_test, ShutdownReleasesOutsideWaiters) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    auto f = sched.submit([&] {
        fj_test::spin_until([&] { return release.load(); }, std::chrono::milliseconds(50));
        return 8;
    });
    std::atomic<int> got{0};
    std::thread waiter([&] { got.store(fj_test::get_or(f, -1)); });
    release.store(true);
    sched.shutdown();
    waiter.join();
    EXPECT_EQ(got.load(), 8);
}

// An outside thread helping with reschedule_until while the scheduler shuts down does not stop
// the drain from finishing, and its predicate still becomes true.
TEST_P(lifecycle_test, ShutdownWhileOutsideThreadHelps) {
    const int n = static_cast<int>(fj_test::scaled(20'000));
    fj::scheduler sched(workers());
    std::atomic<int> ran{0};
    for (int i = 0; i < n; ++i)
        sched.submit([&] { ran.fetch_add(1); });
    std::thread helper([&] {
        const auto deadline = std::chrono::steady_clock::now() + fj_test::k_deadline;
        sched.reschedule_until(
            [&] { return ran.load() == n || std::chrono::steady_clock::now() > deadline; });
    });
    sched.shutdown();
    helper.join();
    EXPECT_EQ(ran.load(), n);
}

INSTANTIATE_TEST_SUITE_P(Workers, lifecycle_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

class default_scheduler_test : public fj_test::guarded_test {};

// On the main thread fj::current_scheduler() is the default scheduler; fj::async, fj::fork and
// fj::join run there, and inside those tasks the default scheduler is the current one.
TEST_F(default_scheduler_test, MainThreadUsesDefaultScheduler) {
    fj::scheduler& def = fj::default_scheduler();
    EXPECT_EQ(&fj::current_scheduler(), &def);
    EXPECT_EQ(&fj::default_scheduler(), &def); // one instance
    EXPECT_GE(def.worker_count(), 1u);
    auto f = fj::async([&] { return &fj::current_scheduler() == &def && def.on_worker_thread(); });
    EXPECT_TRUE(fj_test::get_or(f, false));
    auto g = fj::fork([] { return 6; });
    EXPECT_EQ(fj_test::get_or(g, -1), 6);
    auto [a, b] = fj::join([] { return 1; }, [] { return 2; });
    EXPECT_EQ(a + b, 3);
    bool done = false;
    auto h = fj::async([&] { done = true; });
    fj::reschedule_until([&] { return h.is_ready(); });
    h.get();
    EXPECT_TRUE(done);
}

} // namespace
