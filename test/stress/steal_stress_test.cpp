// Stealing under pressure, on the smallest deques: a capacity-2 Chase-Lev deque grows while
// thieves race the owner, and schedulers whose deques start at capacity 2 run fork-heavy and
// join-heavy programs correctly on every worker count.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <forkjoin/detail/chase_lev_deque.hpp>

namespace {

using fj::detail::chase_lev_deque;
using fj::detail::steal_result;

// Exactly once across growth: each round starts a fresh capacity-2 deque, so every round grows
// it several times while `thieves` threads steal; each item is taken by exactly one pop/steal.
class deque_steal_stress_test : public fj_test::workers_test {};

TEST_P(deque_steal_stress_test, CapacityTwoDequeGrowsUnderTheftWithoutLossOrDuplication) {
    const int thieves = GetParam();
    const std::size_t rounds = fj_test::scaled(600);
    constexpr std::size_t per_round = 2000;
    std::vector<int> values(per_round);
    for (std::size_t i = 0; i < per_round; ++i)
        values[i] = static_cast<int>(i);

    std::size_t missing = 0;
    std::size_t duplicated = 0;
    std::size_t total_stolen = 0;
    fj_test::rng random(static_cast<std::uint64_t>(thieves));
    fj_test::progress_watchdog dog(fj_test::current_test_name()); // no scheduler: a bare deque
    for (std::size_t round = 0; round < rounds; ++round) {
        dog.tick();
        chase_lev_deque<int*> d(2);
        std::vector<std::atomic<int>> taken(per_round);
        std::atomic<bool> owner_done{false};
        std::atomic<std::size_t> stolen{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < thieves; ++t)
            threads.emplace_back([&] {
                for (;;) {
                    int* out = nullptr;
                    const steal_result r = d.steal(out);
                    if (r == steal_result::success) {
                        taken[static_cast<std::size_t>(*out)].fetch_add(1,
                                                                        std::memory_order_relaxed);
                        stolen.fetch_add(1, std::memory_order_relaxed);
                    } else if (r == steal_result::empty) {
                        if (owner_done.load(std::memory_order_acquire))
                            return;
                        std::this_thread::yield();
                    }
                }
            });
        std::size_t pushed = 0;
        while (pushed < per_round) {
            // Mostly grow (bursts up to 64), sometimes pop back to empty to fight over the last
            // item.
            const std::size_t burst = 1 + random.below(64);
            for (std::size_t i = 0; i < burst && pushed < per_round; ++i)
                d.push(&values[pushed++]);
            const std::size_t pops = random.below(3) == 0 ? burst : random.below(3);
            for (std::size_t i = 0; i < pops; ++i)
                if (int* p = d.pop())
                    taken[static_cast<std::size_t>(*p)].fetch_add(1, std::memory_order_relaxed);
        }
        while (int* p = d.pop())
            taken[static_cast<std::size_t>(*p)].fetch_add(1, std::memory_order_relaxed);
        owner_done.store(true, std::memory_order_release);
        for (auto& t : threads)
            t.join();
        for (auto& c : taken) {
            missing += c.load() == 0;
            duplicated += c.load() > 1;
        }
        total_stolen += stolen.load();
        if (missing != 0 || duplicated != 0)
            break;
    }
    EXPECT_EQ(missing, 0u);
    EXPECT_EQ(duplicated, 0u);
    RecordProperty("stolen", static_cast<int>(total_stolen));
}

INSTANTIATE_TEST_SUITE_P(Thieves, deque_steal_stress_test, fj_test::worker_counts(),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return "thieves_" + std::to_string(info.param);
                         });

using fj_test::fib_fork;

using fj_test::fib_join;

class scheduler_steal_stress_test : public fj_test::workers_test {
protected:
    fj::scheduler_options tiny_deques() const {
        fj::scheduler_options o;
        o.workers = workers();
        o.initial_deque_capacity = 2;
        return o;
    }
};

// Fork- and join-heavy recursion on capacity-2 deques gives the serial answer, repeatedly.
TEST_P(scheduler_steal_stress_test, RecursionOnTinyDequesMatchesSerial) {
    fj::scheduler sched(tiny_deques());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    const std::size_t rounds = fj_test::scaled(40);
    const auto started = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < rounds; ++i) {
        auto f = sched.submit([] { return fib_fork(18) + fib_join(18); });
        ASSERT_EQ(fj_test::get_or(f, -1L), 2 * fj_test::fib_serial(18)) << "round " << i;
        dog.tick();
    }
    // The fork-heavy load this held, for docs/reliability.md (printed, never asserted).
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::uint64_t tasks = sched.stats().total().tasks_run;
    std::printf("%llu tasks in %.2f s: %.0f tasks/s\n", static_cast<unsigned long long>(tasks),
                seconds, static_cast<double>(tasks) / seconds);
}

// A wide fan-out (one task forks 2000 children before waiting for any) grows a capacity-2 deque
// while idle workers steal from it; every child runs exactly once.
TEST_P(scheduler_steal_stress_test, WideFanOutOnTinyDeque) {
    fj::scheduler sched(tiny_deques());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    constexpr int width = 2000;
    const auto fan_out = [&] {
        std::vector<std::atomic<int>> ran(width);
        auto f = sched.submit([&] {
            std::vector<fj::future<void>> children;
            children.reserve(width);
            for (int i = 0; i < width; ++i)
                children.push_back(
                    fj::fork([&ran, i] { ran[static_cast<std::size_t>(i)].fetch_add(1); }));
            for (auto& c : children)
                c.get();
        });
        if (!fj_test::get_void(f))
            return false;
        dog.tick();
        for (int i = 0; i < width; ++i)
            if (ran[static_cast<std::size_t>(i)].load() != 1) {
                ADD_FAILURE() << "child " << i << " ran " << ran[static_cast<std::size_t>(i)].load()
                              << " times";
                return false;
            }
        return true;
    };
    for (std::size_t round = 0; round < fj_test::scaled(40); ++round)
        ASSERT_TRUE(fan_out()) << "round " << round;
    if (workers() > 1) {
        // The fan-out must really have been stolen from. On a loaded machine the other workers
        // may not get a CPU for a few rounds, so keep going (up to the deadline) until one did:
        // a wall-clock-free check that still fails if stealing never happens.
        EXPECT_TRUE(fj_test::spin_until([&] {
            return fan_out() && sched.stats().total().steals > 0;
        })) << "no worker ever stole from the fan-out";
    }
    sched.shutdown();
}

INSTANTIATE_TEST_SUITE_P(Workers, scheduler_steal_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
