// Stress for the rescue of blocked pools (docs/design/rescue.md): blocking bursts (undeclared and
// through fj::blocking) mixed with fork/join trees, on pools of 1-4 workers, and pools destroyed
// while spares run. Run with parking on and, as a second whole-binary run, off.
#include "../support.hpp"
#include "stress_seed.hpp"

#include <latch>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

class rescue_stress_test : public fj_test::workers_test {};

using fj_test::fib_join;

fj::scheduler make_pool(std::size_t workers) {
    fj::scheduler_options o;
    o.workers = workers;
    return fj::scheduler(o);
}

// Each round: more tasks block on a latch than the pool has workers (some declared with
// fj::blocking, some not), fork/join trees run beside them, and the task that opens the latch is
// queued last. Everything finishes with the right results.
TEST_P(rescue_stress_test, BlockingBurstsWhileForkingAndJoining) {
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    fj_test::rng random(seed);
    fj::scheduler pool = make_pool(workers());
    const int rounds = static_cast<int>(40 / fj_test::k_sanitizer_slowdown) + 4;
    for (int round = 0; round < rounds; ++round) {
        std::latch open(1);
        const int blockers = static_cast<int>(workers()) + 1 + static_cast<int>(random.below(3));
        std::vector<fj::future<long>> futures;
        for (int i = 0; i < blockers; ++i) {
            const bool declared = random.below(2) == 0;
            futures.push_back(fj::async(pool, [&open, declared, i]() -> long {
                auto child = fj::fork([i] { return fib_join(10 + i % 4); });
                if (declared)
                    fj::blocking([&open] { open.wait(); });
                else
                    open.wait();
                return child.get();
            }));
            futures.push_back(fj::async(pool, [] { return fib_join(14); }));
        }
        futures.push_back(fj::async(pool, [&open]() -> long {
            open.count_down();
            return 0;
        }));
        long sum = 0, expected = 0;
        for (int i = 0; i < blockers; ++i)
            expected += fib_join(10 + i % 4) + fib_join(14);
        for (auto& f : futures)
            sum += fj_test::get_or(f, -1000000L, "round " + std::to_string(round));
        ASSERT_EQ(sum, expected) << "round " << round << "\n" << pool.stats();
    }
    const fj::scheduler_stats s = pool.stats();
    EXPECT_LE(s.spares_running, *pool.options().max_spare_workers);
}

// Pools destroyed while spares run (and while their tasks are still blocked): the destructor
// waits for every task, which the rescue lets finish, and joins every spare.
TEST_P(rescue_stress_test, ShutdownWhileSparesRun) {
    const int rounds = static_cast<int>(30 / fj_test::k_sanitizer_slowdown) + 4;
    std::atomic<int> ran{0};
    int submitted = 0;
    for (int round = 0; round < rounds; ++round) {
        std::latch open(1);
        {
            fj::scheduler pool = make_pool(workers());
            for (std::size_t i = 0; i < workers() + 1; ++i, ++submitted)
                (void)fj::async(pool, [&open, &ran] {
                    open.wait();
                    ran.fetch_add(1);
                });
            ++submitted;
            (void)fj::async(pool, [&open, &ran] {
                std::this_thread::sleep_for(1ms);
                open.count_down();
                ran.fetch_add(1);
            });
        } // the destructor drains: the opener runs on a spare
        ASSERT_EQ(ran.load(), submitted) << "round " << round;
    }
}

INSTANTIATE_TEST_SUITE_P(Workers, rescue_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
