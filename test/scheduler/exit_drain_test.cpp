// Exit safety: tasks still queued on the default scheduler when the program calls exit() all run
// before the process ends — nothing submitted is lost at shutdown, including the work those tasks
// add while the scheduler drains. Returning from main is the same path: it calls exit(), which
// runs the static destructors, the default scheduler's among them.
//
// Each case runs in a death-test child, re-executed ("threadsafe" style) rather than forked from
// this multi-threaded process, so it also runs under ThreadSanitizer and AddressSanitizer. Every
// task writes one byte ('@') to stderr with write(2) (unbuffered, so nothing is lost in a stdio
// buffer at exit); a last atexit handler in the child counts them.
#include "support.hpp"

#include <atomic>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

constexpr int k_tasks = 2000;
constexpr int k_async_every = 10; // every 10th task also submits one more while draining
constexpr int k_expected_marks = k_tasks + k_tasks + k_tasks / k_async_every;

std::atomic<bool> g_release_blockers{false};
std::atomic<int> g_ran{0};

void mark() {
    g_ran.fetch_add(1);
    (void)!::write(STDERR_FILENO, "@", 1);
}

// Runs in the child: busy every default worker, queue k_tasks behind them, and exit while all of
// them are still queued. An atexit handler registered after the default scheduler was created
// runs before its destructor, and releases the workers only then.
[[noreturn]] void queue_tasks_then_exit() {
    // Registered before the default scheduler exists, so it runs after that scheduler's
    // destructor (exit() runs handlers and static destructors in reverse order of registration):
    // every task has run or never will. It reports the count and exits non-zero on a shortfall.
    std::atexit([] {
        const int ran = g_ran.load();
        const std::string line =
            "\ndrained: " + std::to_string(ran) + " of " + std::to_string(k_expected_marks) + "\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
        if (ran != k_expected_marks)
            std::_Exit(3);
    });
    fj::scheduler& pool = fj::default_scheduler();
    std::atexit([] { g_release_blockers.store(true); });
    auto blockers = fj_test::occupy_workers(pool, g_release_blockers);
    for (int i = 0; i < k_tasks; ++i)
        (void)fj::async([i] { // future dropped: fire and forget
            mark();
            (void)fj::fork(mark); // a child forked while the scheduler drains
            if (i % k_async_every == 0)
                (void)fj::default_scheduler().submit(mark); // a submit from its own task
        });
    // Every task is still queued (the workers are all busy until exit): report it, then go.
    const std::string before = "\nran before exit: " + std::to_string(g_ran.load()) + "\n";
    (void)!::write(STDERR_FILENO, before.data(), before.size());
    std::exit(0);
}

TEST(exit_drain_DeathTest, tasks_queued_on_the_default_scheduler_at_exit_all_run) {
    fj_test::watchdog dog(fj_test::current_test_name());
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // None ran before exit() (the workers were busy), all k_expected_marks after it: the child's
    // last atexit handler counted them (and exits 3 otherwise).
    const std::string expected =
        "ran before exit: 0\n@*\ndrained: " + std::to_string(k_expected_marks) + " of " +
        std::to_string(k_expected_marks);
    EXPECT_EXIT(queue_tasks_then_exit(), ::testing::ExitedWithCode(0), expected)
        << "expected " << k_expected_marks << " marks, all after exit()";
}

} // namespace
