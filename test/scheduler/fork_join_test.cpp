// fork / join / reschedule_until / try_run_one: results match the serial program for every worker
// count, nesting is unbounded by design (deep join chains, nested help-while-waiting), work may be
// forked from stolen tasks and moved between schedulers, and fj::current_scheduler() always names
// the scheduler whose task is running.
#include "support.hpp"

#include <atomic>
#include <sstream>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

namespace {

using fj_test::fib_serial;

using fj_test::fib_fork;
using fj_test::fib_join;

// A join chain: each level joins the next level with a trivial branch, so depth == levels.
long join_chain(int depth) {
    if (depth == 0)
        return 0;
    auto [rest, one] = fj::join([depth] { return join_chain(depth - 1); }, [] { return 1L; });
    return rest + one;
}

class fork_join_test : public fj_test::workers_test {};

// fork + future::get computes the same fib as the serial code.
TEST_P(fork_join_test, ForkFibMatchesSerial) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] { return fib_fork(20); });
    EXPECT_EQ(fj_test::get_or(f, -1L), fib_serial(20));
}

// join computes the same fib as the serial code.
TEST_P(fork_join_test, JoinFibMatchesSerial) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] { return fib_join(22); });
    EXPECT_EQ(fj_test::get_or(f, -1L), fib_serial(22));
}

// join called from outside the pool runs both branches on the pool's workers and returns both.
TEST_P(fork_join_test, JoinFromOutsideRunsOnPool) {
    fj::scheduler sched(workers());
    auto [a, b] = sched.join([&] { return sched.on_worker_thread() ? fib_join(15) : -1L; },
                             [&] { return sched.on_worker_thread() ? 2 : -1; });
    EXPECT_EQ(a, fib_serial(15));
    EXPECT_EQ(b, 2);
}

// join's result type: void when both branches are void, std::monostate for one void branch,
// and references stay references.
TEST_P(fork_join_test, JoinResultTypes) {
    fj::scheduler sched(workers());
    std::atomic<int> ran{0};
    static_assert(std::is_void_v<decltype(sched.join([] {}, [] {}))>);
    sched.join([&] { ran.fetch_add(1); }, [&] { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 2);

    auto mixed = sched.join([&] { ran.fetch_add(1); }, [] { return 5; });
    static_assert(std::is_same_v<decltype(mixed), std::pair<std::monostate, int>>);
    EXPECT_EQ(mixed.second, 5);

    int x = 1;
    std::string s = "s";
    auto refs = sched.join([&]() -> int& { return x; }, [&]() -> std::string& { return s; });
    static_assert(std::is_same_v<decltype(refs), std::pair<int&, std::string&>>);
    EXPECT_EQ(&refs.first, &x);
    EXPECT_EQ(&refs.second, &s);
}

// A task that was stolen (it runs on another thread than its forker) can itself fork and join,
// and those results are correct.
class stolen_work_test : public fj_test::workers_test {};
TEST_P(stolen_work_test, ForkFromInsideStolenWork) {
    fj::scheduler sched(workers());
    auto root = sched.submit([] {
        // Thread identities are stored into atomics that both sides see, the moment they are
        // read. std::this_thread::get_id() is a const function (glibc's pthread_self), so a
        // compiler may evaluate it anywhere before its first use, even after a wait that resumed
        // the task on another thread: clang -O2 did, in this test, and the child seemed to start
        // on its forker's thread (docs/design/parking.md, migration and thread-locals).
        std::atomic<std::thread::id> parent{std::this_thread::get_id()};
        std::atomic<std::thread::id> child_start{};
        std::atomic<bool> child_started{false};
        auto child = fj::fork([&] {
            child_start.store(std::this_thread::get_id());
            child_started.store(true);
            return fib_fork(16) + fib_join(16);
        });
        // Not helping here, so only another worker can start the child: it must be stolen.
        const bool started = fj_test::spin_until([&] { return child_started.load(); });
        const long value = child.get();
        return std::tuple{started, child_start.load() != parent.load(), value};
    });
    ASSERT_TRUE(fj_test::wait_ready(root));
    const auto [started, stolen, value] = root.get();
    EXPECT_TRUE(started) << "no worker stole the child";
    EXPECT_TRUE(stolen);
    EXPECT_EQ(value, 2 * fib_serial(16));
    sched.shutdown();
    EXPECT_GE(sched.stats().total().steals, 1u);
}
INSTANTIATE_TEST_SUITE_P(Workers, stolen_work_test, fj_test::multi_worker_counts(),
                         fj_test::worker_count_name);

// A join chain 10^4 levels deep completes (every level's frame stays on the worker's stack).
TEST_P(fork_join_test, DeepJoinChain) {
    constexpr int depth = 10'000;
    fj::scheduler sched(workers());
    auto f = sched.submit([] { return join_chain(depth); });
    EXPECT_EQ(fj_test::get_or(f, -1L), depth);
}

// reschedule_until nests on a worker: each level waits (helping) for a child that itself waits
// for its own child, and every level returns once its predicate holds.
void nested_wait(int depth, std::atomic<int>& returned) {
    if (depth == 0)
        return;
    std::atomic<bool> child_done{false};
    auto child = fj::fork([&, depth] {
        nested_wait(depth - 1, returned);
        child_done.store(true);
    });
    fj::reschedule_until([&] { return child_done.load(); });
    returned.fetch_add(1);
    child.get();
}

TEST_P(fork_join_test, NestedRescheduleUntil) {
    constexpr int depth = 500;
    fj::scheduler sched(workers());
    std::atomic<int> returned{0};
    auto f = sched.submit([&] { nested_wait(depth, returned); });
    ASSERT_TRUE(fj_test::get_void(f));
    EXPECT_EQ(returned.load(), depth);
}

using fj_test::occupy_workers;

// reschedule_until from the main thread helps: with every worker busy, the main thread itself runs
// the queued tasks (with their scheduler as the current one) until the predicate holds.
TEST_P(fork_join_test, RescheduleUntilFromMainHelps) {
    constexpr int n = 100;
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    auto blockers = occupy_workers(sched, release);
    const auto main_thread = std::this_thread::get_id();
    std::atomic<int> ran{0};
    std::atomic<int> ran_on_main_with_sched{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < n; ++i)
        tasks.push_back(sched.submit([&] {
            if (std::this_thread::get_id() == main_thread && &fj::current_scheduler() == &sched &&
                !sched.on_worker_thread())
                ran_on_main_with_sched.fetch_add(1);
            ran.fetch_add(1);
        }));
    const auto deadline = std::chrono::steady_clock::now() + fj_test::k_deadline;
    sched.reschedule_until(
        [&] { return ran.load() == n || std::chrono::steady_clock::now() > deadline; });
    EXPECT_EQ(ran.load(), n);
    EXPECT_EQ(ran_on_main_with_sched.load(), n);
    release.store(true);
    for (auto& b : blockers)
        fj_test::get_void(b);
}

// try_run_one from outside runs exactly one queued task, as a task of that scheduler, and returns
// false when nothing is queued.
TEST_P(fork_join_test, TryRunOneFromOutside) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    auto blockers = occupy_workers(sched, release);
    std::atomic<fj::scheduler*> seen{nullptr};
    auto f = sched.submit([&] {
        seen.store(&fj::current_scheduler());
        // fork from a task run by an outside thread goes to the same scheduler
        return fj::fork([] { return 4; });
    });
    EXPECT_TRUE(sched.try_run_one());
    EXPECT_EQ(seen.load(), &sched);
    ASSERT_TRUE(f.is_ready());
    fj::future<int> inner = f.get();
    EXPECT_TRUE(sched.try_run_one())
        << "the task forked by the helped task was not queued on sched";
    EXPECT_EQ(fj_test::get_or(inner, -1), 4);
    EXPECT_FALSE(sched.try_run_one());
    release.store(true);
    for (auto& b : blockers)
        fj_test::get_void(b);
}

// Inside a task running on a worker, fj::current_scheduler() is that task's scheduler and
// on_worker_thread() is true; on the main thread it is false.
TEST_P(fork_join_test, CurrentSchedulerInsideTask) {
    fj::scheduler sched(workers());
    EXPECT_FALSE(sched.on_worker_thread());
    auto f = sched.submit([&] {
        auto inner = fj::fork(
            [&] { return &fj::current_scheduler() == &sched && sched.on_worker_thread(); });
        return &fj::current_scheduler() == &sched && sched.on_worker_thread() && inner.get();
    });
    EXPECT_TRUE(fj_test::get_or(f, false));
}

// A task may submit to another scheduler and wait for the result there.
TEST_P(fork_join_test, TaskSubmitsToAnotherScheduler) {
    fj::scheduler a(workers());
    fj::scheduler b(workers());
    auto f = a.submit([&] {
        auto g = b.submit([&] { return b.on_worker_thread() ? fib_fork(15) : -1L; });
        auto h = fj::async(b, [&] { return &fj::current_scheduler() == &b; });
        return std::pair{g.get(), h.get()};
    });
    ASSERT_TRUE(fj_test::wait_ready(f));
    const auto [value, on_b] = f.get();
    EXPECT_EQ(value, fib_serial(15));
    EXPECT_TRUE(on_b);
}

// Two schedulers feeding each other: tasks on A wait for futures from B and vice versa, in a tree
// of depth 8 with several roots at once, and nothing deadlocks.
long ping_pong(fj::scheduler& here, fj::scheduler& there, int depth) {
    if (depth == 0)
        return 1;
    auto left = there.submit([&here, &there, depth] { return ping_pong(there, here, depth - 1); });
    auto right = there.submit([&here, &there, depth] { return ping_pong(there, here, depth - 1); });
    return left.get() + right.get() + 1;
}

TEST_P(fork_join_test, TwoSchedulersFeedingEachOther) {
    // Under TSan, depth 6: about half the tasks are parked at once, each on a fiber that g++'s
    // TSan takes milliseconds to create (depth 8 took 7-15 s per worker count).
    constexpr int depth = fj_test::k_thread_sanitizer ? 6 : 8;
    constexpr long nodes = (1L << (depth + 1)) - 1;
    fj::scheduler a(workers());
    fj::scheduler b(workers());
    std::vector<fj::future<long>> roots;
    for (int i = 0; i < 4; ++i) {
        fj::scheduler& first = i % 2 == 0 ? a : b;
        fj::scheduler& second = i % 2 == 0 ? b : a;
        roots.push_back(
            first.submit([&first, &second] { return ping_pong(first, second, depth); }));
    }
    for (auto& r : roots)
        EXPECT_EQ(fj_test::get_or(r, -1L), nodes);
}

// Tasks submitted from one thread to a one-worker scheduler start in submission (FIFO) order.
TEST(fifo_test, SubmitsFromOneThreadStartInOrderWithOneWorker) {
    fj_test::watchdog dog(fj_test::current_test_name());
    constexpr int n = 1000;
    fj::scheduler sched(1);
    std::vector<int> order; // written only by the single worker
    order.reserve(n);
    std::vector<fj::future<void>> fs;
    for (int i = 0; i < n; ++i)
        fs.push_back(sched.submit([&order, i] { order.push_back(i); }));
    for (auto& f : fs)
        ASSERT_TRUE(fj_test::get_void(f));
    ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(order[static_cast<std::size_t>(i)], i) << "at position " << i;
}

// Stats count every fork once and every run once: after shutdown, tasks_run == forks +
// injected_taken, and there is one entry per worker.
TEST_P(fork_join_test, StatsCountEveryForkAndRun) {
    fj::scheduler sched(workers());
    auto f = sched.submit([] {
        std::vector<fj::future<void>> fs;
        for (int i = 0; i < 100; ++i)
            fs.push_back(fj::fork([] {}));
        const long v = fib_join(12);
        for (auto& g : fs)
            g.get();
        return v;
    });
    auto g = sched.submit([] { return 1; });
    EXPECT_EQ(fj_test::get_or(f, -1L), fib_serial(12));
    EXPECT_EQ(fj_test::get_or(g, -1), 1);
    sched.shutdown();
    const fj::scheduler_stats stats = sched.stats();
    ASSERT_EQ(stats.workers.size(), workers());
    const fj::worker_stats total = stats.total();
    constexpr std::uint64_t joins_in_fib12 = 232; // internal nodes of fib(12)'s call tree
    EXPECT_EQ(total.forks, 100 + joins_in_fib12);
    EXPECT_EQ(total.injected_taken, 2u);
    EXPECT_EQ(total.tasks_run, total.forks + total.injected_taken);
    EXPECT_LE(total.steals, total.forks);
    EXPECT_LE(total.wakeups, total.sleeps);
    std::ostringstream out;
    out << stats;
    EXPECT_NE(out.str().find("total: tasks_run=" + std::to_string(total.tasks_run)),
              std::string::npos)
        << out.str();
}

INSTANTIATE_TEST_SUITE_P(Workers, fork_join_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

// A worker's own task must see its own scheduler as the current one, even when it runs nested
// inside a task of another scheduler that this worker picked up with try_run_one(): here a task of
// A runs on B's worker (via A.try_run_one()), waits for a B future, and B's worker runs that B task
// while helping. Inside the B task, fj::current_scheduler() must be B (fj::fork there must go to
// B).
TEST(cross_scheduler_test, OwnTaskRunWhileHelpingForeignTaskSeesOwnScheduler) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler a(1);
    fj::scheduler b(1);
    std::atomic<bool> release_a{false};
    auto blockers = occupy_workers(a, release_a); // A's task below can only run via try_run_one

    std::atomic<fj::scheduler*> seen_in_a_task{nullptr};
    std::atomic<fj::scheduler*> seen_in_b_task{nullptr};
    auto a_task = a.submit([&] {
        seen_in_a_task.store(&fj::current_scheduler());
        auto probe = b.submit([&] { seen_in_b_task.store(&fj::current_scheduler()); });
        probe.wait(); // on B's worker: helps B, so it runs `probe` itself
    });
    auto outer = b.submit([&] { return a.try_run_one(); });
    EXPECT_TRUE(fj_test::get_or(outer, false));
    EXPECT_TRUE(fj_test::get_void(a_task));
    EXPECT_EQ(seen_in_a_task.load(), &a) << "a task run via try_run_one must see its own scheduler";
    EXPECT_EQ(seen_in_b_task.load(), &b)
        << "B's task, run by B's worker while it helped, saw scheduler A as current "
           "(tl_context.s is left at A by run_one_outside while B's worker runs B's tasks)";
    release_a.store(true);
    for (auto& f : blockers)
        fj_test::get_void(f);
}

} // namespace
