// POSIX fork() in a process with running schedulers: the child gets a fresh default scheduler,
// refuses (with a clear error) to use schedulers whose workers stayed in the parent, and never
// hangs, also when fork() lands while workers hold the runtime's mutexes. The parent carries on.
// A program that never uses the default scheduler starts no threads.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <latch>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

// ThreadSanitizer by default kills a child that starts threads after a multi-threaded fork()
// (die_after_fork=1). The tests that run under it start no thread in the child (see
// k_tsan_skip_reason), so let the child live.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_options() {
    return "die_after_fork=0";
}
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
extern "C" const char* __tsan_default_options() {
    return "die_after_fork=0";
}
#endif
#endif

namespace {

using fj_test::thread_count;

// Runs `child` in a forked child, which exits with its return value (as a status code). The
// parent waits with a deadline: a child that hangs is killed and reported.
// What the sanitizers cannot follow (measured with GCC 12's runtimes; docs/reliability.md):
// - ThreadSanitizer keeps the parent's threads registered in the child. A thread the child starts
//   can get one of their stacks (glibc reuses them) and so their thread id, and the sanitizer
//   aborts with "dup thread with used id" (exit 66). Under it, only tests whose child starts no
//   thread run.
// - AddressSanitizer takes no lock around fork(): a child forked while another thread is inside
//   the sanitizer's allocator (which has its own locks) can hang at its first malloc. Under it the
//   child is forked only once the parent's workers sleep (see settle), and the test that forks
//   while workers allocate on purpose runs in Release only.
constexpr const char* k_tsan_skip_reason =
    "the child starts threads, which ThreadSanitizer (GCC 12) cannot follow after fork(): "
    "'dup thread with used id'";
constexpr const char* k_asan_skip_reason =
    "forks while other threads allocate, which AddressSanitizer's allocator (GCC 12: no atfork "
    "lock) cannot survive";

// Under AddressSanitizer, waits until every worker of `pools` (and of the default scheduler)
// sleeps, so no thread is inside the sanitizer's allocator when fork() copies its locks.
void settle(std::initializer_list<const fj::scheduler*> pools) {
    if (!fj_test::k_address_sanitizer)
        return;
    const auto all_asleep = [](const fj::scheduler& pool) {
        for (const fj::worker_stats& w : pool.stats().workers)
            if (!w.asleep && !w.caller) // a caller's slot is this thread's, which is here
                return false;
        return true;
    };
    EXPECT_TRUE(fj_test::spin_until([&] { return all_asleep(fj::default_scheduler()); }));
    for (const fj::scheduler* pool : pools)
        EXPECT_TRUE(fj_test::spin_until([&] { return all_asleep(*pool); }));
}

template <class Child>
int run_in_child(Child&& child, std::initializer_list<const fj::scheduler*> pools = {}) {
    settle(pools);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork() failed";
        return -1;
    }
    if (pid == 0) {
        int code = 100;
        try {
            code = child();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "child: unexpected exception: %s\n", e.what());
            code = 101;
        }
        std::_Exit(code); // no gtest teardown in the child
    }
    const auto deadline = std::chrono::steady_clock::now() + fj_test::k_deadline;
    for (;;) {
        int status = 0;
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ADD_FAILURE() << "the child hung after fork()";
            return -2;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

class fork_safety_test : public fj_test::guarded_test {};

TEST_F(fork_safety_test, child_gets_a_fresh_default_scheduler_and_parent_keeps_its_own) {
    if (fj_test::k_thread_sanitizer)
        GTEST_SKIP() << k_tsan_skip_reason;
    ASSERT_EQ(fj::async([] { return 1; }).get(), 1); // the default scheduler runs in the parent
    fj::scheduler* parent_default = &fj::default_scheduler();
    const int code = run_in_child([&] {
        if (&fj::default_scheduler() == parent_default)
            return 2; // must be a new one
        if (fj::async([] { return 42; }).get() != 42)
            return 3;
        const long sum = fj::parallel_reduce(
            0, 1000, 0L, [](int i) { return long{i}; }, std::plus<>{});
        return sum == 499500 ? 0 : 4;
    });
    EXPECT_EQ(code, 0);
    EXPECT_EQ(&fj::default_scheduler(), parent_default);
    EXPECT_EQ(fj::async([] { return 7; }).get(), 7);
}

TEST_F(fork_safety_test, child_refuses_a_scheduler_created_before_the_fork) {
    fj::scheduler pool(2);
    ASSERT_EQ(pool.submit([] { return 1; }).get(), 1);
    const int code = run_in_child(
        [&] {
            try {
                (void)pool.submit([] { return 1; });
                return 2; // accepted: it would never run
            } catch (const std::logic_error& e) {
                if (std::string(e.what()).find("created before the fork") == std::string::npos)
                    return 3;
            }
            try {
                fj::parallel_for(pool, 0, 10, [](int) {});
                return 4;
            } catch (const std::logic_error&) {
            }
            pool.shutdown(); // must not wait for the parent's threads
            return 0;
        },
        {&pool});
    EXPECT_EQ(code, 0);
    EXPECT_EQ(pool.submit([] { return 5; }).get(), 5); // the parent's pool is untouched
}

TEST_F(fork_safety_test, fork_while_workers_churn_never_hangs_the_child) {
    if (fj_test::k_thread_sanitizer)
        GTEST_SKIP() << k_tsan_skip_reason;
    if (fj_test::k_address_sanitizer)
        GTEST_SKIP() << k_asan_skip_reason;
    fj::scheduler pool(3);
    std::atomic<bool> stop{false};
    // Workers and an outside thread allocate and free task blocks all the time, so fork() often
    // lands while one of them holds the central pool's mutex.
    std::thread churn([&] {
        while (!stop.load())
            (void)pool.submit([] { return fj_test::fib_fork(12); }).get();
    });
    struct stop_churn { // also when an ASSERT below returns early: never leave it joinable
        std::atomic<bool>& stop;
        std::thread& churn;
        ~stop_churn() {
            stop = true;
            churn.join();
        }
    } stopper{stop, churn};
    for (int round = 0; round < static_cast<int>(fj_test::scaled(20)); ++round) {
        const int code = run_in_child([] {
            fj::scheduler fresh(2);
            return fresh.submit([] { return fj_test::fib_fork(15); }).get() == 610 &&
                           fj::async([] { return 3; }).get() == 3
                       ? 0
                       : 2;
        });
        ASSERT_EQ(code, 0) << "round " << round;
    }
}

TEST_F(fork_safety_test, fork_while_spares_exist) {
    // A pool rescued from blocked tasks (docs/design/rescue.md) has spare threads and a monitor;
    // none of them exists in the child, which must neither hang nor touch them.
    if (fj_test::k_thread_sanitizer)
        GTEST_SKIP() << k_tsan_skip_reason;
    fj::scheduler_options o;
    o.workers = 1;
    o.max_spare_workers = 1; // then the monitor starts nothing more (no allocation under fork)
    fj::scheduler pool(o);
    std::latch open(1);
    std::atomic<int> waiting{0};
    std::vector<fj::future<void>> blocked;
    for (int i = 0; i < 2; ++i)
        blocked.push_back(pool.submit([&] {
            waiting.fetch_add(1);
            open.wait();
        }));
    ASSERT_TRUE(fj_test::spin_until([&] { return waiting.load() == 2; })); // one on the spare
    ASSERT_EQ(pool.stats().spares_running, 1u);
    const int code = run_in_child([&pool] {
        try {
            (void)pool.submit([] { return 1; });
            return 2;
        } catch (const std::logic_error&) {
        }
        if (fj::async([] { return 3; }).get() != 3)
            return 3;
        return 0; // _Exit: the pool's destructor would be the parent's business
    });
    EXPECT_EQ(code, 0);
    open.count_down();
    for (auto& f : blocked)
        EXPECT_TRUE(fj_test::get_void(f));
}

TEST_F(fork_safety_test, child_exits_cleanly_through_exit) {
    if (fj_test::k_thread_sanitizer)
        GTEST_SKIP() << k_tsan_skip_reason;
    (void)fj::async([] { return 1; }).get();
    const int code = run_in_child([] {
        (void)fj::async([] { return 1; }).get();
        std::exit(0); // static destructors: the child's default scheduler drains and joins
        return 1;
    });
    EXPECT_EQ(code, 0);
}

TEST_F(fork_safety_test, the_default_scheduler_starts_no_threads_until_used) {
    if (fj_test::k_thread_sanitizer)
        GTEST_SKIP() << k_tsan_skip_reason;
    const int code = run_in_child([] {
        // The parent may have used its default scheduler; in the child it does not count.
        if (thread_count() != 1)
            return 2;
        (void)fj::async([] { return 1; }).get();
        // The workers, plus the rescue's monitor (docs/design/rescue.md).
        const int expected = 1 + static_cast<int>(fj::default_scheduler().worker_count()) + 1;
        return thread_count() == expected ? 0 : 3;
    });
    EXPECT_EQ(code, 0);
}

} // namespace
