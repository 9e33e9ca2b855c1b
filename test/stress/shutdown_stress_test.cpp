// Shutdown racing everything else: outside submitters, tasks that keep forking, and outside
// helpers. Every submit either throws fj::scheduler_closed or its task (and everything that task
// adds) runs before shutdown() returns; nothing accepted is lost and nothing hangs.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace {

class shutdown_stress_test : public fj_test::workers_test {};

// Outside threads submit as fast as they can while the main thread shuts down: accepted == run.
// Each accepted task also forks a child, which must run too.
TEST_P(shutdown_stress_test, SubmitsRacingShutdownLoseNothing) {
    constexpr int submitters = 3;
    const std::size_t rounds = fj_test::scaled(100);
    fj_test::rng random(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    for (std::size_t round = 0; round < rounds; ++round) {
        dog.tick();
        std::atomic<std::size_t> accepted{0};
        std::atomic<std::size_t> ran{0};
        std::atomic<std::size_t> children{0};
        std::atomic<std::size_t> other_errors{0};
        {
            fj::scheduler sched(workers());
            auto watched = dog.watch(sched); // until shutdown() has returned
            std::atomic<int> started{0};
            std::vector<std::thread> threads;
            for (int s = 0; s < submitters; ++s)
                threads.emplace_back([&] {
                    started.fetch_add(1);
                    for (;;) {
                        try {
                            sched.submit([&] {
                                ran.fetch_add(1);
                                fj::fork([&] { children.fetch_add(1); });
                            });
                            accepted.fetch_add(1);
                        } catch (const fj::scheduler_closed&) {
                            return;
                        } catch (...) {
                            other_errors.fetch_add(1);
                            return;
                        }
                    }
                });
            fj_test::spin_until([&] { return started.load() == submitters; });
            std::this_thread::sleep_for(std::chrono::microseconds(random.below(2000)));
            sched.shutdown();
            // After shutdown() returned: everything accepted so far has run.
            const std::size_t accepted_now = accepted.load();
            const std::size_t ran_now = ran.load();
            for (auto& t : threads)
                t.join();
            // Every submit counted so far was accepted before the close, so its task has run.
            EXPECT_GE(ran_now, accepted_now) << "shutdown() returned before accepted tasks ran";
        }
        ASSERT_EQ(other_errors.load(), 0u);
        ASSERT_EQ(ran.load(), accepted.load()) << "round " << round << ": accepted tasks were lost";
        ASSERT_EQ(children.load(), accepted.load())
            << "round " << round << ": forked children were lost";
    }
}

using fj_test::fib_fork;

// Fork trees submitted just before shutdown() complete with correct results.
TEST_P(shutdown_stress_test, ForkTreesFinishDuringShutdown) {
    const std::size_t rounds = fj_test::scaled(100);
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    for (std::size_t round = 0; round < rounds; ++round) {
        dog.tick();
        std::vector<fj::future<long>> trees;
        {
            fj::scheduler sched(workers());
            auto watched = dog.watch(sched);
            for (int i = 0; i < 4; ++i)
                trees.push_back(sched.submit([] { return fib_fork(14); }));
            if (round % 2 == 0)
                sched.shutdown(); // drains the trees (watched: a hang here is dumped)
        }                         // odd rounds: the destructor shuts down and drains them
        for (auto& t : trees) {
            ASSERT_TRUE(t.is_ready())
                << "round " << round << ": shutdown returned before a tree finished";
            ASSERT_EQ(t.get(), fj_test::fib_serial(14));
        }
    }
}

// Outside threads help (try_run_one) while the scheduler shuts down: everything runs exactly
// once, shutdown() returns, and the helpers see an empty scheduler afterwards.
TEST_P(shutdown_stress_test, OutsideHelpersRacingShutdown) {
    const std::size_t rounds = fj_test::scaled(100);
    const std::size_t tasks = 2000;
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    for (std::size_t round = 0; round < rounds; ++round) {
        dog.tick();
        std::atomic<std::size_t> ran{0};
        fj::scheduler sched(workers());
        auto watched = dog.watch(sched);
        for (std::size_t i = 0; i < tasks; ++i)
            sched.submit([&] { ran.fetch_add(1); });
        std::atomic<bool> stop{false};
        std::vector<std::thread> helpers;
        for (int h = 0; h < 2; ++h)
            helpers.emplace_back([&] {
                while (!stop.load()) {
                    if (!sched.try_run_one())
                        std::this_thread::yield();
                }
            });
        sched.shutdown();
        stop.store(true);
        for (auto& h : helpers)
            h.join();
        ASSERT_EQ(ran.load(), tasks) << "round " << round;
        ASSERT_FALSE(sched.try_run_one());
    }
}

INSTANTIATE_TEST_SUITE_P(Workers, shutdown_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
