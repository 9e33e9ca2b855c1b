// Every outside entry point of one scheduler at once, from several threads: submit + get, join
// from outside, reschedule_until, try_run_one and dropped futures; every result is right and
// every dropped task runs. (Random fork/join trees under mixed load: random_dag_stress_test.)
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace {

class scheduler_stress_test : public fj_test::workers_test {};

// Outside threads use one scheduler through every entry point at once (submit+get, join from
// outside, reschedule_until, try_run_one, dropped futures) and every result is right.
TEST_P(scheduler_stress_test, ManyOutsideThreadsAllEntryPoints) {
    fj::scheduler sched(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(sched);
    const std::size_t iterations = fj_test::scaled(400);
    std::atomic<std::size_t> errors{0};
    std::atomic<std::size_t> dropped_ran{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (std::size_t i = 0; i < iterations; ++i) {
                dog.tick();
                switch ((i + static_cast<std::size_t>(t)) % 4) {
                case 0: {
                    auto f = sched.submit([i] { return static_cast<long>(i) * 2; });
                    if (fj_test::get_or(f, -1L) != static_cast<long>(i) * 2)
                        errors.fetch_add(1);
                    break;
                }
                case 1: {
                    auto [x, y] = sched.join([i] { return i; }, [i] { return i + 1; });
                    if (x + 1 != y)
                        errors.fetch_add(1);
                    break;
                }
                case 2: {
                    auto f = sched.submit([] { return 3; });
                    const auto deadline = std::chrono::steady_clock::now() + fj_test::k_deadline;
                    sched.reschedule_until([&] {
                        return f.is_ready() || std::chrono::steady_clock::now() > deadline;
                    });
                    if (!f.is_ready() || f.get() != 3)
                        errors.fetch_add(1);
                    break;
                }
                default: {
                    sched.submit([&] { dropped_ran.fetch_add(1); }); // future dropped at once
                    sched.try_run_one();
                    break;
                }
                }
            }
        });
    for (auto& t : threads)
        t.join();
    sched.shutdown();
    EXPECT_EQ(errors.load(), 0u);
    EXPECT_EQ(dropped_ran.load(),
              iterations); // each thread takes case 3 for a quarter of its iterations
}

INSTANTIATE_TEST_SUITE_P(Workers, scheduler_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
