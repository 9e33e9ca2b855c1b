// Joins that park on fibers (docs/design/parking.md): a waiter whose child was stolen does not
// trap its worker, returns as soon as the child is done (not when unrelated work finishes), and
// tens of thousands of waiting tasks need no worker each. The schedulers here ask for parking
// (the default) explicitly; FJ_PARKING=0 still turns it off, and then the tests of parking itself
// are skipped.
#include "support.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using fj_test::scaled;
using fj_test::spin_until;

bool parking_on(fj::scheduler& pool) {
    return pool.stats().parking;
}

fj::scheduler_options parking(std::size_t workers) {
    fj::scheduler_options options;
    options.workers = workers;
    options.park_waiting_tasks = true;
    return options;
}

class parking_test : public fj_test::guarded_test {};

// The adversarial case of help-while-waiting (oneTBB#942): the root waits on a stolen child while
// a long unrelated task is queued. Parked, the root continues on the thread that finished the
// child while the long task still runs; helping, it would run the long task on top of its own
// frame and return only after it. The long task ends as soon as the root has returned (or after
// 20 s, which is the failure), so the check is an order of events, not a speed.
TEST_F(parking_test, a_waiter_returns_when_its_child_is_done_not_when_unrelated_work_is) {
    fj::scheduler pool(parking(2));
    if (!parking_on(pool))
        GTEST_SKIP() << "parking is off (FJ_PARKING=0)";
    std::atomic<bool> child_started{false}, root_returned{false}, long_task_timed_out{false};
    auto root = pool.submit([&] {
        auto child = fj::fork([&] {
            child_started = true;
            std::this_thread::sleep_for(50ms);
            return 7;
        });
        // Let the other worker steal the child, then queue the long task behind us.
        if (!spin_until([&] { return child_started.load(); }))
            return -1;
        auto long_task = fj::current_scheduler().submit([&] {
            const auto give_up = std::chrono::steady_clock::now() + 20s;
            while (!root_returned.load())
                if (std::chrono::steady_clock::now() > give_up) {
                    long_task_timed_out = true;
                    return;
                }
        });
        (void)long_task;               // dropped: runs anyway
        const int value = child.get(); // parks: this worker goes on with the long task
        root_returned = true;
        return value;
    });
    EXPECT_EQ(fj_test::get_or(root, 0), 7);
    pool.shutdown();
    EXPECT_FALSE(long_task_timed_out.load())
        << "the waiter was trapped under the long task until it finished";
    EXPECT_GE(pool.stats().total().parks, 1u);
}

// The same, with more unrelated tasks queued than there are workers, many times over: the worker
// that finishes the child resumes the waiter before it starts anything else, also when its
// periodic look at the injection queue (one find in 61, for fairness to outside submissions) falls
// just after the completion. That look once took a queued task first in about 1 round of 61
// (docs/performance.md#join-latency). The first unrelated task holds the root's worker until the
// root has returned; another one that starts before then is the failure (only the child's worker
// can start it): it records that and ends at once, so a failing round costs nothing. The check is
// an order of events, not a speed.
TEST_F(parking_test, the_worker_that_finishes_the_child_resumes_the_waiter_before_queued_work) {
    fj::scheduler pool(parking(2));
    if (!parking_on(pool))
        GTEST_SKIP() << "parking is off (FJ_PARKING=0)";
    constexpr int k_unrelated = 4; // more than the workers: some stay queued while the child runs
    const int rounds = static_cast<int>(scaled(400));
    int passed_over = 0, gave_up = 0;
    for (int round = 0; round < rounds; ++round) {
        std::atomic<int> unrelated_started{0}, unrelated_finished{0}, late_starts{0};
        std::atomic<bool> child_started{false}, root_returned{false};
        std::atomic<bool> timed_out{false};
        auto root = pool.submit([&] {
            auto child = fj::fork([&] {
                child_started = true;
                // Runs until the root's worker has gone on with an unrelated task: the root has
                // parked by then, so finishing now makes it resumable.
                if (!spin_until([&] { return unrelated_started.load() >= 1; }, 20s))
                    timed_out = true;
            });
            if (!spin_until([&] { return child_started.load(); }, 20s)) {
                timed_out = true;
                return;
            }
            for (int i = 0; i < k_unrelated; ++i)
                (void)fj::current_scheduler().submit([&] {
                    // The first one runs on the root's worker and holds it until the root has
                    // returned; the child's worker must resume the root before it starts another.
                    if (unrelated_started.fetch_add(1) > 0) {
                        if (!root_returned.load())
                            late_starts.fetch_add(1); // started while the waiter was resumable
                    } else if (!spin_until([&] { return root_returned.load(); }, 20s)) {
                        timed_out = true;
                    }
                    unrelated_finished.fetch_add(1); // last touch of this round's state
                });
            child.get(); // parks: this worker goes on with the first unrelated task
            root_returned = true;
        });
        root.wait(); // not get(): it could run the root here (docs/design/callers.md#take-over)
        root.get();
        // The dropped unrelated tasks use this round's state.
        if (!spin_until([&] { return unrelated_finished.load() == k_unrelated; }, 20s))
            timed_out = true;
        passed_over += late_starts.load() > 0 ? 1 : 0;
        gave_up += timed_out.load() ? 1 : 0;
    }
    EXPECT_EQ(gave_up, 0);
    EXPECT_EQ(passed_over, 0) << "in " << passed_over << " of " << rounds
                              << " rounds the worker that finished the child started queued "
                                 "work before resuming the waiter";
}

// reschedule_until() on a busy worker re-checks its predicate after the task its worker runs
// next, not after everything queued: on one worker, a waiter whose predicate is made true during
// the first of 8 queued unrelated tasks returns before the others start (the first yield-parking
// version queued the waiter behind all 8: docs/performance.md#reschedule-until). The first task
// holds until the predicate is true, so the check is an order of events, not a speed.
TEST_F(parking_test, reschedule_until_rechecks_after_the_next_task_not_after_the_queue) {
    fj::scheduler pool(parking(1));
    constexpr int k_unrelated = 8;
    std::atomic<int> started{0};
    std::atomic<bool> condition{false}, gave_up{false};
    auto waiter = pool.submit([&] {
        for (int i = 0; i < k_unrelated; ++i)
            (void)fj::current_scheduler().submit([&] {
                if (started.fetch_add(1) == 0 && !spin_until([&] { return condition.load(); }, 20s))
                    gave_up = true;
            });
        fj::current_scheduler().reschedule_until([&] { return condition.load(); });
        return started.load(); // how many unrelated tasks had started when the wait ended
    });
    ASSERT_TRUE(spin_until([&] { return started.load() >= 1; }));
    condition = true;
    const int started_at_return = fj_test::get_or(waiter, -1);
    pool.shutdown();
    EXPECT_FALSE(gave_up.load());
    EXPECT_GE(started_at_return, 1);
    EXPECT_LE(started_at_return, 2) << "the waiter re-checked only after the queued tasks ran";
}

// Tens of thousands of tasks wait at once on a 2-worker pool, each holding 4 KiB of live stack
// data across its wait, without a worker each and without overflowing anything: a chain where
// task i waits for task i+1 and the last one waits for a gate opened from outside.
TEST_F(parking_test, tens_of_thousands_of_tasks_wait_at_once_without_a_worker_each) {
    fj::scheduler_options options = parking(2);
    options.max_parked_tasks = 30000;
    fj::scheduler pool(options);
    if (!parking_on(pool))
        GTEST_SKIP() << "parking is off (FJ_PARKING=0)";
    // 20,000 in Release, 10,000 under ASan. Under TSan each park costs about 15 ms here (its fiber
    // records): with 5,000 the test took 73 s in one CI run and in the next ran out of the 60 s it
    // gives the tasks to reach their waits (the gate task holds one of the two workers). 1,000 take
    // 15-18 s with the machine busy and still park 500 times more tasks than there are workers,
    // which is what a race check of many waiters needs.
    const int n = fj_test::k_thread_sanitizer ? 1000 : static_cast<int>(scaled(20000));
    std::atomic<bool> open{false};
    std::atomic<int> waiting{0};
    fj::future<long> next = pool.submit([&]() -> long {
        spin_until([&] { return open.load(); }, std::chrono::seconds(60));
        return 0;
    });
    for (int i = n - 1; i >= 0; --i) {
        next = pool.submit([&waiting, i, after = std::move(next)]() mutable -> long {
            std::array<unsigned char, 4096> live;
            live.fill(static_cast<unsigned char>(i));
            waiting.fetch_add(1);
            const long rest = after.get(); // parks
            for (unsigned char byte : live)
                if (byte != static_cast<unsigned char>(i))
                    throw std::logic_error("stack data changed across the wait");
            return rest + 1;
        });
    }
    // Every task is waiting at once (and the gate task holds one worker): only parking allows it.
    EXPECT_TRUE(spin_until([&] { return waiting.load() == n; }, std::chrono::seconds(60)))
        << waiting.load() << " of " << n << " tasks reached their wait";
    EXPECT_GE(pool.stats().parked, static_cast<std::uint64_t>(n) - 1);
    EXPECT_GE(pool.stats().peak_fiber_stacks, static_cast<std::uint64_t>(n));
    open = true;
    EXPECT_EQ(fj_test::get_or(next, -1L), n);
}

// Recursion that belongs to the program runs with the default stack sizes: 10^5 nested joins.
TEST_F(parking_test, a_chain_of_a_hundred_thousand_nested_joins_fits_the_default_stacks) {
    // ASan's frames are several times larger; TSan records at most 65,536 frames of one stack.
    constexpr int depth = fj_test::k_address_sanitizer  ? 20000
                          : fj_test::k_thread_sanitizer ? 5000
                                                        : 100000;
    fj::scheduler pool(parking(2));
    struct chain {
        static int down(int n) {
            if (n == 0)
                return 0;
            auto [below, other] = fj::join([n] { return down(n - 1); }, [] { return 1; });
            return below + other;
        }
    };
    auto f = pool.submit([] { return chain::down(depth); }); // constexpr: needs no capture
    EXPECT_EQ(fj_test::get_or(f, -1), depth);
}

// A wait inside a catch block must not migrate (the exception being handled belongs to the
// thread): it helps instead, and still sees its exception afterwards.
TEST_F(parking_test, a_wait_inside_a_catch_block_keeps_its_exception) {
    fj::scheduler pool(parking(2));
    auto f = pool.submit([] {
        try {
            throw std::runtime_error("outer");
        } catch (const std::runtime_error&) {
            auto child = fj::fork([] {
                std::this_thread::sleep_for(1ms);
                return 1;
            });
            std::this_thread::sleep_for(2ms); // likely stolen meanwhile
            const int v = child.get();
            try {
                throw; // the handled exception is still this thread's
            } catch (const std::runtime_error& e) {
                return std::string(e.what()) == "outer" ? v : -1;
            }
        }
    });
    EXPECT_EQ(fj_test::get_or(f, 0), 1);
}

// An exception thrown by a child crosses a park and a migration to the waiter.
TEST_F(parking_test, exceptions_reach_a_waiter_that_parked_and_migrated) {
    fj::scheduler pool(parking(2));
    for (int round = 0; round < static_cast<int>(scaled(200)); ++round) {
        auto f = pool.submit([] {
            auto child = fj::fork([]() -> int {
                std::this_thread::sleep_for(100us);
                throw std::out_of_range("child");
            });
            std::this_thread::sleep_for(50us);
            try {
                child.get();
            } catch (const std::out_of_range&) {
                return 1;
            }
            return 0;
        });
        ASSERT_EQ(fj_test::get_or(f, -1), 1);
    }
}

// Beyond the cap a wait helps instead of parking, and everything still completes.
TEST_F(parking_test, beyond_the_cap_waits_help_instead) {
    fj::scheduler_options options = parking(2);
    options.max_parked_tasks = 1;
    fj::scheduler pool(options);
    std::vector<fj::future<long>> roots;
    for (int i = 0; i < 8; ++i)
        roots.push_back(pool.submit([] {
            struct fib {
                static long of(int n) {
                    if (n < 2)
                        return n;
                    auto a = fj::fork([n] { return of(n - 1); });
                    long b = of(n - 2);
                    return a.get() + b;
                }
            };
            return fib::of(18);
        }));
    for (auto& r : roots)
        EXPECT_EQ(fj_test::get_or(r, -1L), 2584);
    EXPECT_LE(pool.stats().parked, 1u);
}

TEST(parking_options, a_tiny_fiber_stack_is_refused_and_a_huge_one_falls_back_to_helping) {
    fj::scheduler_options tiny = parking(1);
    tiny.fiber_stack_size = 4096;
    try {
        fj::scheduler pool(tiny);
        ADD_FAILURE() << "a 4 KiB fiber stack was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("fiber_stack_size 4096"), std::string::npos);
    }
    // Cannot be mapped: the workers run their loops on their own stacks and waits help.
    fj::scheduler_options huge = parking(2);
    huge.fiber_stack_size = std::size_t{1} << 60;
    fj::scheduler pool(huge);
    auto f = pool.submit([] {
        auto child = fj::fork([] { return 20; });
        std::this_thread::sleep_for(1ms);
        return child.get() + 1;
    });
    EXPECT_EQ(fj_test::get_or(f, 0), 21);
    EXPECT_EQ(pool.stats().total().parks, 0u);
}

// A parking pool's workers run their tasks on fiber stacks, and their own threads on small
// stacks; a pool that does not park gives each thread worker_stack_size, where its tasks run.
TEST(parking_options, only_a_thread_that_runs_tasks_gets_worker_stack_size) {
    constexpr std::size_t k_reserved = std::size_t{32} << 20;
    fj::scheduler_options on = parking(2);
    on.worker_stack_size = k_reserved;
    fj::scheduler parking_pool(on);
    if (!parking_on(parking_pool))
        GTEST_SKIP() << "parking is off (FJ_PARKING=0)";
    auto small = parking_pool.submit(fj_test::running_thread_stack_size);
    const std::size_t small_size = fj_test::get_or(small, std::size_t{0});
    EXPECT_GT(small_size, 0u);
    EXPECT_LT(small_size, k_reserved / 8);

    fj::scheduler_options off = on;
    off.park_waiting_tasks = false;
    fj::scheduler helping_pool(off);
    auto whole = helping_pool.submit(fj_test::running_thread_stack_size);
    EXPECT_GE(fj_test::get_or(whole, std::size_t{0}), k_reserved);
}

TEST(parking_options, fj_parking_environment_variable_is_validated) {
    // Checked by the scheduler constructor; a bad value names itself.
    const char* before = std::getenv("FJ_PARKING");
    const std::string saved = before != nullptr ? before : "";
    ASSERT_EQ(setenv("FJ_PARKING", "maybe", 1), 0);
    try {
        fj::scheduler pool(1);
        ADD_FAILURE() << "FJ_PARKING=maybe was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("FJ_PARKING='maybe'"), std::string::npos);
    }
    ASSERT_EQ(setenv("FJ_PARKING", "0", 1), 0);
    {
        fj::scheduler pool(parking(1));
        EXPECT_FALSE(pool.stats().parking);
    }
    if (before != nullptr)
        ASSERT_EQ(setenv("FJ_PARKING", saved.c_str(), 1), 0);
    else
        ASSERT_EQ(unsetenv("FJ_PARKING"), 0);
}

} // namespace

namespace {

// Recurses without end in a task on a 1-worker pool with `options`: the task overflows whichever
// stack it runs on. 512-byte frames, each reading the one above, so none can be optimised away.
void overflow_in_a_task(fj::scheduler_options options) {
    options.workers = 1;
    fj::scheduler pool(options);
    struct deep {
        static long down(long n, volatile char* previous) {
            volatile char frame[512];
            frame[0] = static_cast<char>(n);
            frame[511] = previous != nullptr ? previous[0] : 0;
            return n == 0 ? frame[511] : down(n - 1, frame) + frame[0];
        }
    };
    auto f = pool.submit([] { return deep::down(1L << 30, nullptr); });
    f.wait(); // on the worker: a get() could run it here (docs/design/callers.md#take-over)
    (void)f.get();
}

// A task that overflows its fiber stack dies with a message that says so (the guard page is
// recognised by the SIGSEGV handler), not with a bare segmentation fault.
TEST(parking_DeathTest, a_fiber_stack_overflow_is_named) {
    if (fj_test::k_sanitized)
        GTEST_SKIP() << "the sanitizers own SIGSEGV and the alternate signal stack";
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
    fj::scheduler_options options;
    options.park_waiting_tasks = true;
    options.fiber_stack_size = std::size_t{256} << 10;
    EXPECT_DEATH(overflow_in_a_task(options), "stack overflow in a task");
}

// With parking off a task runs on its worker thread's own stack (scheduler_options::
// worker_stack_size); overflowing that is named the same way: the thread's stack end is
// registered beside the fiber stacks' guards.
TEST(parking_DeathTest, a_worker_thread_stack_overflow_is_named) {
    if (fj_test::k_sanitized)
        GTEST_SKIP() << "the sanitizers own SIGSEGV and the alternate signal stack";
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
    fj::scheduler_options options;
    options.park_waiting_tasks = false;
    options.worker_stack_size = std::size_t{1} << 20;
    EXPECT_DEATH(overflow_in_a_task(options), "stack overflow in a task");
}

} // namespace

namespace {

// Waits that cannot park (here: inside catch blocks) help, and helping nests each task it runs
// on the waiting stack. On a small fiber stack, 2000 such waits would nest far past its end;
// helping stops taking work when the stack runs low, so they all finish once released.
TEST(parking_fallback, helping_stops_nesting_before_the_stack_runs_out) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler_options options;
    options.workers = 2;
    options.park_waiting_tasks = true;
    options.fiber_stack_size = std::size_t{1} << 20;
    fj::scheduler pool(options);
    if (!pool.stats().parking)
        GTEST_SKIP() << "parking is off (FJ_PARKING=0): waits help on the 64 MiB worker stacks";
    std::atomic<bool> go{false};
    std::atomic<int> started{0}, finished{0};
    const int n = 2000;
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < n; ++i)
        tasks.push_back(pool.submit([&] {
            volatile char frame[1024] = {};
            started.fetch_add(1);
            try {
                throw 1;
            } catch (int) {
                fj::reschedule_until([&] { return go.load(); }); // cannot park here: helps
            }
            finished.fetch_add(1 + frame[0]);
        }));
    // Let the workers nest as deep as they will, then release everybody.
    EXPECT_TRUE(spin_until([&] { return started.load() >= 2; }));
    std::this_thread::sleep_for(200ms);
    EXPECT_LT(started.load(), n) << "every wait nested: the stack check did not stop helping";
    go = true;
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(finished.load(), n);
}

} // namespace
