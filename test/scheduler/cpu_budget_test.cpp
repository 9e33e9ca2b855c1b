// One budget of running workers per process (docs/design/cpu-budget.md): busy pools that have
// more workers in all than fj::running_worker_limit() never run more than that many tasks at
// once; a worker blocked in the kernel does not hold up a worker that waits for its place; a pool
// made with share_cpu_budget = false runs all its workers at once.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <latch>
#include <thread>
#include <vector>

namespace {

// Counts the tasks running at once and remembers the most.
struct concurrency {
    std::atomic<int> now{0};
    std::atomic<int> most{0};

    void run_busy(std::chrono::microseconds how_long) {
        const int n = now.fetch_add(1) + 1;
        int seen = most.load();
        while (n > seen && !most.compare_exchange_weak(seen, n)) {
        }
        const auto until = std::chrono::steady_clock::now() + how_long;
        while (std::chrono::steady_clock::now() < until) {
        }
        now.fetch_sub(1);
    }
};

// Waits until every worker of `pool` has slept once. A worker takes its place when it starts and
// when it wakes (docs/design/cpu-budget.md): one that started before the budget came into force
// (while the pools made so far fitted the limit) runs without a place until its first sleep.
bool every_worker_slept(const fj::scheduler& pool) {
    return fj_test::spin_until([&] {
        const fj::scheduler_stats stats = pool.stats();
        return std::all_of(stats.workers.begin(), stats.workers.end(),
                           [](const fj::worker_stats& w) { return w.sleeps > 0; });
    });
}

fj::scheduler_options pool_of(std::size_t workers, bool share = true) {
    fj::scheduler_options o;
    o.workers = workers;
    o.share_cpu_budget = share;
    return o;
}

TEST(cpu_budget, the_limit_is_the_cpus_the_process_may_use) {
    const std::size_t limit = fj::running_worker_limit();
    EXPECT_GE(limit, 1u);
    EXPECT_LE(limit, std::max<std::size_t>(1, std::thread::hardware_concurrency()));
}

// The shape oneTBB's fractal example has: two arenas of p and p / 2 threads. Here a pool of the
// limit and a pool of one, both kept busy: never more running tasks than the limit.
TEST(cpu_budget, two_busy_pools_never_run_more_tasks_than_the_limit) {
    const std::size_t limit = fj::running_worker_limit();
    fj::scheduler big(pool_of(limit));
    fj::scheduler small(pool_of(1));
    ASSERT_TRUE(every_worker_slept(big));
    ASSERT_TRUE(every_worker_slept(small));
    concurrency seen;
    const int tasks = fj_test::k_sanitized ? 40 : 200;
    const auto each = std::chrono::microseconds(fj_test::k_sanitized ? 400 : 200);
    std::vector<fj::future<void>> done;
    for (int i = 0; i < tasks; ++i) {
        done.push_back(big.submit([&] { seen.run_busy(each); }));
        done.push_back(small.submit([&] { seen.run_busy(each); }));
    }
    for (auto& f : done)
        f.get();
    EXPECT_LE(seen.most.load(), static_cast<int>(limit));
    EXPECT_GE(seen.most.load(), 1);
}

// Every place held by a task asleep in the kernel on a latch that only a task of another pool can
// open: that pool's worker, waiting for a place, runs anyway (no spare workers: only the budget's
// look at the holders can help).
TEST(cpu_budget, workers_blocked_in_the_kernel_do_not_hold_up_a_waiting_worker) {
    const std::size_t limit = fj::running_worker_limit();
    fj::scheduler_options o = pool_of(limit);
    o.max_spare_workers = 0;
    fj::scheduler blocked(o);
    fj::scheduler opener(pool_of(1));
    std::latch open(1);
    std::atomic<std::size_t> waiting{0};
    std::vector<fj::future<void>> done;
    for (std::size_t i = 0; i < limit; ++i)
        done.push_back(blocked.submit([&] {
            waiting.fetch_add(1);
            open.wait();
        }));
    ASSERT_TRUE(fj_test::spin_until([&] { return waiting.load() == limit; }));
    // Every place is held by a blocked task now; the opener's worker must still run this.
    fj::future<void> opened = opener.submit([&] { open.count_down(); });
    opened.get(); // hangs (the watchdog names the test) if the waiting worker never runs
    for (auto& f : done)
        f.get();
}

// A pool that does not share the budget runs beside busy sharing pools as if they were not there.
TEST(cpu_budget, a_pool_that_does_not_share_runs_beside_a_full_budget) {
    const std::size_t limit = fj::running_worker_limit();
    fj::scheduler shared(pool_of(limit));
    fj::scheduler idle(pool_of(1)); // puts the budget in force: limit + 1 sharing workers
    fj::scheduler own(pool_of(1, false));
    std::atomic<std::size_t> arrived{0};
    const std::size_t everyone = limit + 1;
    auto meet = [&] {
        arrived.fetch_add(1);
        while (arrived.load() < everyone) // spinning: running, never blocked in the kernel
            std::this_thread::yield();
    };
    std::vector<fj::future<void>> done;
    for (std::size_t i = 0; i < limit; ++i)
        done.push_back(shared.submit(meet)); // every place held by a spinning task
    done.push_back(own.submit(meet));        // hangs if this worker waited for a place
    for (auto& f : done)
        f.get();
    EXPECT_EQ(arrived.load(), everyone);
}

} // namespace
