// Sleep and wake-up: workers that go idle (spin_before_sleep = 0, so they sleep at once) are
// always woken by new work, whether it arrives by submit from outside or by fork from a busy
// worker, and no submitted task is ever left unrun.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace {

class sleep_wake_stress_test : public fj_test::workers_test {
protected:
    fj::scheduler_options sleepy() const {
        fj::scheduler_options o;
        o.workers = workers();
        o.spin_before_sleep = std::chrono::microseconds(0);
        return o;
    }
};

// Idle -> submit -> complete, many times: the pool goes to sleep between tasks and every submit
// wakes it (a lost wake-up shows as a future that never becomes ready).
TEST_P(sleep_wake_stress_test, IdleSubmitCompleteLoops) {
    fj::scheduler sched(sleepy());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    const std::size_t rounds = fj_test::scaled(3000);
    fj_test::rng random(workers());
    for (std::size_t i = 0; i < rounds; ++i) {
        dog.tick();
        if (random.below(8) == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(random.below(200)));
        auto f = sched.submit([i] { return i; });
        ASSERT_EQ(fj_test::get_or(f, rounds), i) << "round " << i;
    }
    EXPECT_GT(sched.stats().total().sleeps, 0u)
        << "the workers never slept: the wake path was not exercised";
}

// Two submits back to back while a worker is taking the first: both run. (This races the
// injection queue's pop of its last item against a push, with default spinning.)
TEST_P(sleep_wake_stress_test, BackToBackSubmitsAllRun) {
    fj::scheduler sched(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    const std::size_t rounds = fj_test::scaled(50'000);
    for (std::size_t i = 0; i < rounds; ++i) {
        dog.tick();
        auto f1 = sched.submit([] { return 1; });
        auto f2 = sched.submit([] { return 2; });
        // Both checked, even when the first fails, so the failure names every lost submit.
        const bool first_ran = fj_test::wait_ready(f1, "first submit");
        const bool second_ran = fj_test::wait_ready(f2, "second submit");
        ASSERT_TRUE(first_ran && second_ran) << "round " << i << ": a submitted task never ran";
    }
}

// Several outside threads submit in bursts with random pauses (the pool keeps falling asleep and
// waking); every task runs and every future becomes ready.
TEST_P(sleep_wake_stress_test, ConcurrentBurstySubmitters) {
    fj::scheduler sched(sleepy());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    constexpr int submitters = 3;
    const std::size_t rounds = fj_test::scaled(1000);
    std::atomic<std::size_t> ran{0};
    std::atomic<std::size_t> submitted{0};
    std::atomic<std::size_t> failures{0};
    std::vector<std::thread> threads;
    for (int s = 0; s < submitters; ++s)
        threads.emplace_back([&, s] {
            fj_test::rng random(static_cast<std::uint64_t>(s) + 11);
            for (std::size_t r = 0; r < rounds; ++r) {
                std::vector<fj::future<void>> burst;
                const std::size_t n = 1 + random.below(4);
                for (std::size_t k = 0; k < n; ++k)
                    burst.push_back(sched.submit([&] { ran.fetch_add(1); }));
                submitted.fetch_add(n);
                dog.tick();
                for (auto& f : burst)
                    if (f.wait_for(fj_test::k_deadline) != std::future_status::ready)
                        failures.fetch_add(1);
                if (random.below(4) == 0)
                    std::this_thread::sleep_for(std::chrono::microseconds(random.below(100)));
            }
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(failures.load(), 0u)
        << "futures not ready after " << fj_test::k_deadline.count() << " s";
    sched.shutdown();
    EXPECT_EQ(ran.load(), submitted.load());
}

// A fork from a busy worker wakes a sleeping worker to steal it: the forking task does not help,
// so the child can only start on a woken sibling.
class fork_wakes_sleeper_test : public sleep_wake_stress_test {};
TEST_P(fork_wakes_sleeper_test, ForkWakesSleepingWorker) {
    fj::scheduler sched(sleepy());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    const std::size_t rounds = fj_test::scaled(500);
    for (std::size_t i = 0; i < rounds; ++i) {
        dog.tick();
        // Let the idle workers fall asleep first (they do so immediately with zero spin).
        if (i % 8 == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        auto f = sched.submit([] {
            std::atomic<bool> started{false};
            auto child = fj::fork([&] { started.store(true); });
            const bool woke = fj_test::spin_until([&] { return started.load(); });
            child.get();
            return woke;
        });
        ASSERT_TRUE(fj_test::get_or(f, false))
            << "round " << i << ": no sleeping worker took the fork";
    }
}

INSTANTIATE_TEST_SUITE_P(Workers, sleep_wake_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);
INSTANTIATE_TEST_SUITE_P(Workers, fork_wakes_sleeper_test, fj_test::multi_worker_counts(),
                         fj_test::worker_count_name);

} // namespace
