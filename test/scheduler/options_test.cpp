// scheduler_options take effect: the worker count (explicit, FJ_WORKERS, or the CPUs available),
// pinning, the smallest deque and stack, and spin_before_sleep = 0 (workers really sleep and wake).
#include "support.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <set>
#include <string>
#include <thread>

namespace {

using fj_test::fib_join;

class options_test : public fj_test::workers_test {
protected:
    fj::scheduler_options options() const {
        fj::scheduler_options o;
        o.workers = workers();
        return o;
    }
};

// The scheduler has exactly the requested number of workers, all running at once: n tasks that
// each wait for all n to have started can only finish on n distinct threads.
TEST_P(options_test, WorkerCountIsExact) {
    fj::scheduler sched(workers());
    EXPECT_EQ(sched.worker_count(), workers());
    EXPECT_EQ(sched.options().workers, workers());
    std::atomic<std::size_t> arrived{0};
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::vector<fj::future<bool>> fs;
    for (std::size_t i = 0; i < workers(); ++i)
        fs.push_back(sched.submit([&] {
            {
                std::lock_guard lock(mutex);
                threads.insert(std::this_thread::get_id());
            }
            arrived.fetch_add(1);
            return fj_test::spin_until([&] { return arrived.load() == workers(); });
        }));
    for (auto& f : fs)
        EXPECT_TRUE(fj_test::get_or(f, false));
    EXPECT_EQ(threads.size(), workers());
    EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

// The options a scheduler was built with are reported back unchanged (workers resolved).
TEST_P(options_test, OptionsAreKept) {
    fj::scheduler_options o = options();
    o.worker_stack_size = std::size_t{1} << 20;
    o.spin_before_sleep = std::chrono::microseconds(7);
    o.initial_deque_capacity = 16;
    fj::scheduler sched(o);
    EXPECT_EQ(sched.options().workers, workers());
    EXPECT_EQ(sched.options().worker_stack_size, std::size_t{1} << 20);
    EXPECT_EQ(sched.options().spin_before_sleep, std::chrono::microseconds(7));
    EXPECT_EQ(sched.options().initial_deque_capacity, 16u);
    EXPECT_FALSE(sched.options().pin_workers);
}

// The smallest accepted settings work: a deque of capacity 1 (rounded to 2, grows on demand) and
// the minimum 64 KiB stack, for a fork-heavy computation of modest depth.
TEST_P(options_test, SmallestDequeAndStackWork) {
    fj::scheduler_options o = options();
    o.initial_deque_capacity = 1;
    o.worker_stack_size = std::size_t{64} << 10;
    fj::scheduler sched(o);
    auto f = sched.submit([] { return fib_join(18); });
    EXPECT_EQ(fj_test::get_or(f, -1L), fj_test::fib_serial(18));
}

// With spin_before_sleep = 0 idle workers go to sleep (counted in stats), and new work wakes them.
TEST_P(options_test, ZeroSpinWorkersSleepAndWake) {
    fj::scheduler_options o = options();
    o.spin_before_sleep = std::chrono::microseconds(0);
    fj::scheduler sched(o);
    EXPECT_TRUE(fj_test::spin_until([&] { return sched.stats().total().sleeps >= workers(); }))
        << "idle workers did not sleep";
    for (int round = 0; round < 20; ++round) {
        auto f = sched.submit([round] { return round; });
        ASSERT_EQ(fj_test::get_or(f, -1), round);
    }
    EXPECT_GE(sched.stats().total().wakeups, 1u);
}

// pin_workers = true pins each worker to a single CPU of the process's affinity mask.
TEST_P(options_test, PinnedWorkersRunOnOneCpu) {
    fj::scheduler_options o = options();
    o.pin_workers = true;
    fj::scheduler sched(o);
    std::vector<fj::future<int>> fs;
    for (int i = 0; i < 20; ++i)
        fs.push_back(sched.submit([] {
            cpu_set_t set;
            CPU_ZERO(&set);
            if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0)
                return -1;
            return CPU_COUNT(&set);
        }));
    for (auto& f : fs)
        EXPECT_EQ(fj_test::get_or(f, -2), 1);
}

INSTANTIATE_TEST_SUITE_P(Workers, options_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

class default_count_test : public fj_test::guarded_test {};

// Without FJ_WORKERS the default worker count is at most the number of CPUs in the affinity mask
// (as nproc reports; a cgroup CPU quota may lower it: worker_count_test), the same for the default
// constructor, scheduler(0) and options with workers = 0, and what fj::default_worker_count() says.
TEST_F(default_count_test, DefaultIsAtMostTheAffinityMask) {
    fj_test::scoped_env env("FJ_WORKERS", nullptr);
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    const auto cpus = static_cast<std::size_t>(CPU_COUNT(&set));
    const std::size_t count = fj::default_worker_count();
    EXPECT_GE(count, 1u);
    EXPECT_LE(count, cpus);
    EXPECT_EQ(fj::scheduler().worker_count(), count);
    EXPECT_EQ(fj::scheduler(std::size_t{0}).worker_count(), count);
    EXPECT_EQ(fj::scheduler(fj::scheduler_options{}).worker_count(), count);
}

// FJ_WORKERS sets the default worker count, and only the default.
TEST_F(default_count_test, EnvironmentSetsDefault) {
    fj_test::scoped_env env("FJ_WORKERS", "3");
    EXPECT_EQ(fj::scheduler().worker_count(), 3u);
    EXPECT_EQ(fj::scheduler(std::size_t{0}).worker_count(), 3u);
    EXPECT_EQ(fj::scheduler(std::size_t{2}).worker_count(), 2u);
    fj::scheduler_options o;
    EXPECT_EQ(fj::scheduler(o).options().workers, 3u);
}

} // namespace
