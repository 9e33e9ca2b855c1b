// A million submit / idle / wake cycles (over the four worker counts): several outside threads each
// submit one task at a time to workers that go to sleep the moment they run out of work
// (spin_before_sleep = 0), wait for it, and pause at random so the pool keeps falling asleep
// between submits. A lost wake-up — of a worker, or of the waiting thread — shows as a round that
// misses its deadline; the test then fails with the scheduler's full state (every worker's
// counters, deque length, asleep or awake, the injection queue) and whether the missed task had
// run, so the log says which wake-up was lost.
#include "progress_watchdog.hpp"
#include "stress/stress_seed.hpp"
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// 10^6 cycles per run of the suite in Release: 250,000 for each of the four worker counts (1-4),
// which keeps each test to a few seconds on a loaded 2-core machine (a cycle costs ~10-40 us
// there: most of them are a real futex sleep and wake). Sanitized builds run fewer, by
// fj_test::scaled: 62,500 per worker count under ThreadSanitizer (1/4), 125,000 under
// AddressSanitizer (1/2), so they stay well inside the CTest timeout; docs/reliability.md says so.
constexpr std::size_t k_release_cycles_per_worker_count = 250'000;
const std::size_t k_cycles = fj_test::scaled(k_release_cycles_per_worker_count);
constexpr int k_submitters = 4;

// A task runs in microseconds; a round that takes this long lost a wake-up.
constexpr std::chrono::seconds k_round_deadline{20};

class wake_cycles_stress_test : public fj_test::workers_test {};

TEST_P(wake_cycles_stress_test, submit_idle_wake_cycles_lose_no_wake_up) {
    fj::scheduler_options options;
    options.workers = workers();
    options.spin_before_sleep = std::chrono::microseconds(0);
    fj::scheduler pool(options);
    // Longer than a round's deadline, so a lost wake-up is reported by the round (with the task's
    // fate) rather than by the watchdog.
    fj_test::progress_watchdog dog(fj_test::current_test_name(),
                                   k_round_deadline + std::chrono::seconds(10));
    auto watched = dog.watch(pool);

    const std::uint64_t seed = fj_test::stress_seed();
    const std::size_t per_thread = k_cycles / k_submitters;
    std::atomic<std::size_t> ran{0};
    // last_ran[t] = 1 + the last round of submitter t whose task ran (outlives every task).
    std::vector<std::atomic<std::size_t>> last_ran(k_submitters);
    std::atomic<bool> failed{false};
    std::mutex report_mutex;
    std::string report; // guarded by report_mutex: the first missed round's diagnosis

    const auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> submitters;
    for (int t = 0; t < k_submitters; ++t)
        submitters.emplace_back([&, t] {
            fj_test::rng random(seed + static_cast<std::uint64_t>(t));
            for (std::size_t round = 0; round < per_thread && !failed.load(); ++round) {
                // Random pauses: mostly none (back-to-back submits race the worker going to
                // sleep), sometimes a yield, rarely long enough for the whole pool to sleep.
                const std::size_t pause = random.below(256);
                if (pause == 0)
                    std::this_thread::sleep_for(std::chrono::microseconds(random.below(200)));
                else if (pause < 16)
                    std::this_thread::yield();
                auto f = pool.submit([&ran, &mine = last_ran[static_cast<std::size_t>(t)], round] {
                    mine.store(round + 1);
                    ran.fetch_add(1, std::memory_order_relaxed);
                });
                // Half the submitters poll briefly before blocking (the task usually finishes
                // within microseconds), half block at once: both ways of waiting are woken.
                for (int poll = 0; t % 2 == 0 && poll < 64 && !f.is_ready(); ++poll)
                    std::this_thread::yield();
                if (f.wait_for(k_round_deadline) != std::future_status::ready) {
                    const bool task_did_run =
                        last_ran[static_cast<std::size_t>(t)].load() == round + 1;
                    std::lock_guard lock(report_mutex);
                    if (!failed.exchange(true))
                        report = "submitter " + std::to_string(t) + ", round " +
                                 std::to_string(round) + ": not ready after " +
                                 std::to_string(k_round_deadline.count()) + " s; the task " +
                                 (task_did_run ? "ran (the waiting thread was not woken)"
                                               : "never ran (no worker was woken for it)") +
                                 "; " + std::to_string(ran.load()) + " of " +
                                 std::to_string(k_cycles) + " tasks ran; " +
                                 fj_test::replay_hint(seed) + "\n" + fj_test::state_of(pool);
                    std::fprintf(stderr, "%s", report.c_str()); // also if the run then hangs
                    return;
                }
                f.get();
                dog.tick();
            }
        });
    for (auto& s : submitters)
        s.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    ASSERT_FALSE(failed.load()) << report;
    EXPECT_EQ(ran.load(), per_thread * k_submitters);
    const fj::worker_stats total = pool.stats().total();
    EXPECT_GT(total.sleeps, 0u) << "the workers never slept: no idle/wake cycle was exercised";
    std::printf("%zu cycles from %d threads in %.2f s: %.0f cycles/s; workers slept %llu times\n",
                per_thread * k_submitters, k_submitters, seconds,
                static_cast<double>(per_thread * k_submitters) / seconds,
                static_cast<unsigned long long>(total.sleeps));
    RecordProperty("cycles_per_second",
                   static_cast<int>(static_cast<double>(per_thread * k_submitters) / seconds));
}

INSTANTIATE_TEST_SUITE_P(workers, wake_cycles_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
