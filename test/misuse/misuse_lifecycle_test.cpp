// The misuse catalogue (misuse_support.hpp), lifecycle: submitting to and shutting down a closed
// scheduler, absurd options and FJ_WORKERS values, the misuses that end the process (death
// tests), and the problems the catalogue found, each fixed.
#include "misuse_support.hpp"

namespace {

using namespace std::chrono_literals;
using namespace fj_test::misuse;

// --- Lifecycle -----------------------------------------------------------------------------------

// While shutdown() drains, the pool's own tasks may still submit, fork, async and chain then()
// onto it: accepted, and run before shutdown() returns. Outside threads and tasks of another
// scheduler get fj::scheduler_closed.
TEST_P(misuse_workers_test, OwnTasksMaySubmitWhileClosedAndItRuns) {
    fj::scheduler sched(workers());
    fj::scheduler other(1);
    std::atomic<int> ran{0};
    auto inside = sched.submit([&] {
        if (!fj_test::spin_until([&] { return sched.is_closed(); }))
            return std::string("the scheduler was never closed");
        try {
            (void)sched.submit([&] { ++ran; });
            (void)sched.fork([&] { ++ran; });
            (void)fj::async([&] { ++ran; });
            (void)sched.submit([] { return 1; }).then([&](int) { ++ran; });
            return std::string("accepted");
        } catch (const std::exception& e) {
            return std::string("refused: ") + e.what();
        }
    });
    sched.shutdown(); // closes, then waits for the task above and everything it adds
    EXPECT_EQ(ran.load(), 4) << "work accepted during the drain was lost";
    ASSERT_TRUE(inside.is_ready());
    EXPECT_EQ(inside.get(), "accepted");

    EXPECT_THROW_WITH((void)sched.submit([] {}), fj::scheduler_closed, k_closed);
    auto from_other = other.submit(
        [&] { return catch_as<fj::scheduler_closed>([&] { (void)sched.submit([] {}); }).what; });
    EXPECT_NE(fj_test::get_or(from_other, std::string("hang")).find(k_closed), std::string::npos);
}

// The algorithms called from outside on a shut-down scheduler throw fj::scheduler_closed (they
// run as one task there); with nothing to run they return without touching the scheduler.
TEST_F(misuse_test, AlgorithmsOnClosedSchedulerThrowSchedulerClosed) {
    fj::scheduler sched(2);
    sched.shutdown();
    std::atomic<int> calls{0};
    auto body = [&](int) { ++calls; };
    auto map = [&](int i) {
        ++calls;
        return i;
    };
    std::vector<int> v(4);
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, body), fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH(fj::parallel_for_each(sched, v.begin(), v.end(), [&](int&) { ++calls; }),
                      fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, 0, 10, 0, map, std::plus<>{}),
                      fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH(fj::parallel_invoke(
                          sched, [&] { ++calls; }, [&] { ++calls; }),
                      fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH((void)sched.join(three, three), fj::scheduler_closed, k_closed);
    EXPECT_NO_THROW(fj::parallel_for(sched, 0, 0, body));
    EXPECT_EQ(fj::parallel_reduce(sched, 0, 0, 7, map, std::plus<>{}), 7);
    EXPECT_NO_THROW(fj::parallel_invoke(sched));
    EXPECT_EQ(calls.load(), 0);
}

// shutdown() from one of the pool's own tasks throws std::logic_error saying why (it would wait
// for itself), also through a loop body; shutting down *another* scheduler from a task is fine.
TEST_P(misuse_workers_test, ShutdownFromOwnTaskSaysWhy) {
    fj::scheduler sched(workers());
    auto direct =
        sched.submit([&] { return catch_as<std::logic_error>([&] { sched.shutdown(); }).what; });
    EXPECT_NE(fj_test::get_or(direct, std::string("hang"))
                  .find("fj::scheduler::shutdown() called from one of the scheduler's own tasks"),
              std::string::npos);
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 4, [&](int) { sched.shutdown(); }),
                      std::logic_error, "Call shutdown() from outside the pool");
    EXPECT_FALSE(sched.is_closed());

    fj::scheduler other(1);
    auto cross = sched.submit([&] {
        other.shutdown();
        return other.is_closed();
    });
    EXPECT_TRUE(fj_test::get_or(cross, false));
    auto still_works = sched.submit(three);
    EXPECT_EQ(fj_test::get_or(still_works, -1), 3);
}

// --- Options and FJ_WORKERS ----------------------------------------------------------------------

// Worker counts above scheduler_options::max_workers (4096) are rejected with the count and the
// limit, by the count constructor and by the options (bad_input_test checks the other options).
TEST_F(misuse_test, AbsurdWorkerCountsNameTheLimit) {
    EXPECT_THROW_WITH(fj::scheduler s(5000), std::invalid_argument,
                      "fj::scheduler: 5000 workers requested; the limit is 4096 (use 0 for one "
                      "per available CPU)");
    EXPECT_THROW_WITH(fj::scheduler s(SIZE_MAX), std::invalid_argument,
                      std::to_string(SIZE_MAX) + " workers requested; the limit is 4096");
    fj::scheduler_options o;
    o.workers = 4097;
    EXPECT_THROW_WITH(fj::scheduler s(o), std::invalid_argument,
                      "4097 workers requested; the limit is 4096");
}

// A stack that cannot be reserved makes the constructor throw std::runtime_error naming the
// worker that failed, after undoing what it started. (worker_stack_size is the stack of a thread
// whose tasks run on it: parking off. A parking pool's workers run theirs on fiber stacks.)
TEST_F(misuse_test, UnreservableWorkerStackFailsConstruction) {
    fj::scheduler_options o;
    o.workers = 2;
    o.park_waiting_tasks = false;
    o.worker_stack_size = std::size_t{1} << 62; // 4 EiB
    EXPECT_THROW_WITH(fj::scheduler s(o), std::runtime_error,
                      "fj::scheduler: could not start worker thread 1 of 2: ");
    fj::scheduler fine(2); // nothing was left behind
    auto f = fine.submit(three);
    EXPECT_EQ(fj_test::get_or(f, -1), 3);
}

// FJ_WORKERS with trailing junk ("4x") is rejected like the other malformed values that
// bad_input_test's bad_env_test checks, quoting the value and saying what is accepted.
TEST_F(misuse_test, FjWorkersWithTrailingJunkIsRejected) {
    fj_test::scoped_env env("FJ_WORKERS", "4x");
    EXPECT_THROW_WITH(fj::scheduler s, std::invalid_argument,
                      "FJ_WORKERS='4x' is not a worker count: use a whole number from 1 to 4096, "
                      "or unset it to use one worker per available CPU");
    EXPECT_THROW_WITH(fj::scheduler s(std::size_t{0}), std::invalid_argument, "FJ_WORKERS='4x'");
    fj::scheduler explicit_count(2); // an explicit count does not read FJ_WORKERS
    EXPECT_EQ(explicit_count.worker_count(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Workers, misuse_workers_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

// --- Death tests: the process ends (or must start fresh) ----------------------------------------

class misuse_DeathTest : public fj_test::guarded_test {
protected:
    void SetUp() override { ::testing::FLAGS_gtest_death_test_style = "threadsafe"; }
};

void destroy_from_own_task_on_worker() {
    auto* sched = new fj::scheduler(1);
    auto f = sched->submit([sched] { delete sched; });
    f.wait(); // never returns: the destructor terminates the process
}

void destroy_from_own_task_on_helping_thread() {
    auto* sched = new fj::scheduler(1);
    std::atomic<bool> release{false};
    auto blockers = fj_test::occupy_workers(*sched, release);
    auto f = sched->submit([sched] { delete sched; });
    (void)sched->try_run_one(); // the calling thread runs the task: it is one of the pool's
}

// Destroying a scheduler from one of its own tasks cannot work (the destructor waits for every
// task, including the one running it): the runtime prints why and calls std::terminate.
TEST_F(misuse_DeathTest, DestroyFromOwnTaskTerminatesWithMessage) {
    EXPECT_DEATH(destroy_from_own_task_on_worker(),
                 "fj::scheduler destroyed from one of its own tasks: it cannot wait for itself");
    EXPECT_DEATH(destroy_from_own_task_on_helping_thread(), "destroyed from one of its own tasks");
}

// The default scheduler (fj::async, the algorithms without a scheduler) reads FJ_WORKERS when it
// is first used: a malformed value makes that use throw std::invalid_argument quoting it, and a
// later use, with the value fixed, creates it. Needs a fresh process: the default scheduler is
// created once.
void default_scheduler_with_bad_fj_workers() {
    std::string problem;
    {
        fj_test::scoped_env env("FJ_WORKERS", "4x");
        const thrown t = catch_as<std::invalid_argument>([] { (void)fj::async(three); });
        if (!t.right_type ||
            t.what.find("FJ_WORKERS='4x' is not a worker count") == std::string::npos)
            problem = "first use: " + t.what;
    }
    if (problem.empty()) {
        fj_test::scoped_env env("FJ_WORKERS", "3");
        if (fj::async(three).get() != 3)
            problem = "second use: wrong value";
        else if (fj::default_scheduler().worker_count() != 3)
            problem = "second use: not 3 workers";
    }
    std::fprintf(stderr, "%s\n", problem.empty() ? "default scheduler ok" : problem.c_str());
    // _Exit: no atexit work (ThreadSanitizer sleeps a second there); the default scheduler's
    // clean exit is lifecycle_test's business.
    std::_Exit(problem.empty() ? 0 : 1);
}

TEST_F(misuse_DeathTest, DefaultSchedulerRejectsBadFjWorkersThenRecovers) {
    EXPECT_EXIT(default_scheduler_with_bad_fj_workers(), ::testing::ExitedWithCode(0),
                "default scheduler ok");
}

// --- Problems this catalogue found, now fixed (docs/errors.md "Found by this catalogue")
// -----------

// Was KNOWN PROBLEM 1, fixed: reschedule_until() does not check its predicate. A null function
// pointer is called: SIGSEGV. (An empty std::function throws std::bad_function_call: see the next
// test.)
void reschedule_until_null_predicate() {
    fj::scheduler sched(1);
    bool (*null_predicate)() = nullptr;
    const thrown t =
        catch_as<std::invalid_argument>([&] { sched.reschedule_until(null_predicate); });
    std::fprintf(stderr, "%s\n", t.right_type ? "rejected" : t.what.c_str());
    std::_Exit(t.right_type ? 0 : 1);
}

TEST_F(misuse_DeathTest, RescheduleUntilRejectsNullPredicate) {
    EXPECT_EXIT(reschedule_until_null_predicate(), ::testing::ExitedWithCode(0), "rejected");
}

// Was KNOWN PROBLEM 1 (continued), fixed: an empty std::function predicate throws
// std::bad_function_call from inside reschedule_until instead of std::invalid_argument "empty
// callable" like every other entry point.
TEST_F(misuse_test, RescheduleUntilRejectsEmptyStdFunctionPredicate) {
    fj::scheduler sched(1);
    EXPECT_THROW_WITH(sched.reschedule_until(std::function<bool()>{}), std::invalid_argument,
                      k_empty_callable);
    EXPECT_THROW_WITH(fj::reschedule_until(std::function<bool()>{}), std::invalid_argument,
                      k_empty_callable);
}

// Was KNOWN PROBLEM 2, fixed: parallel_reduce without a grain over more than 2^64 - 1024 indices.
// The default grain ceil(n / 1024) is computed as (n + 1023) / 1024, which wraps to 0; a grain of 0
// never stops halving: run(lo, lo + 1) splits into run(lo, lo) and run(lo, lo + 1) forever,
// until the worker's stack overflows (SIGSEGV). The size is reachable with 64-bit blocked ranges.
void reduce_near_two_to_64_without_grain() {
    fj::scheduler sched(2);
    const std::uint64_t n = fj::parallel_reduce(
        sched, fj::blocked_range<std::uint64_t>{0, UINT64_MAX}, std::uint64_t{0},
        [](fj::blocked_range<std::uint64_t> r, std::uint64_t acc) { return acc + r.size(); },
        std::plus<>{});
    std::fprintf(stderr, "%s\n", n == UINT64_MAX ? "reduce ok" : "wrong sum");
    std::_Exit(n == UINT64_MAX ? 0 : 1);
}

TEST_F(misuse_DeathTest, ReduceNearTwoTo64WithoutGrain) {
    EXPECT_EXIT(reduce_near_two_to_64_without_grain(), ::testing::ExitedWithCode(0), "reduce ok");
}

// Was KNOWN PROBLEM 3, fixed (the option is capped at 100 ms): spin_before_sleep has no upper
// bound, and idle workers do not look at the closed flag while they spin, so shutdown() (and the
// destructor) waits up to spin_before_sleep: with an hour, an hour. (microseconds::max() overflows
// steady_clock::now() + spin: undefined behaviour, reported by UBSan.) Fixed means: rejected by the
// constructor, or a prompt shutdown.
TEST_F(misuse_test, LongSpinBeforeSleepDoesNotDelayShutdown) {
    fj::scheduler_options o;
    o.workers = 2;
    o.spin_before_sleep = 5s;
    std::optional<fj::scheduler> sched;
    try {
        sched.emplace(o);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("spin_before_sleep"), std::string::npos) << e.what();
        return; // rejected: fixed
    }
    auto f = sched->submit(three);
    EXPECT_EQ(fj_test::get_or(f, -1), 3);
    const auto start = std::chrono::steady_clock::now();
    sched->shutdown();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s)
        << "shutdown() waited for the idle workers' spin_before_sleep";
}

} // namespace
