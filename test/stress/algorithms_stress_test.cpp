// The algorithms and the composition layer under load, each run guarded by a progress watchdog
// that dumps the scheduler's state if the run stalls: nested parallel_for three levels deep with
// random sizes, grains and exceptions; reschedule_until nested 10^4 deep; schedulers created and
// destroyed while tasks cross between them; random graphs of then / when_all / when_any / cancel.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace {

using fj_test::scaled;

class algorithms_stress_test : public fj_test::workers_test {};

using fj_test::at_index;

TEST_P(algorithms_stress_test, nested_parallel_for_three_deep_with_random_failures) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    fj_test::rng random(17 + workers());
    for (std::size_t round = 0; round < scaled(300); ++round) {
        const std::size_t a = 1 + random.below(20), b = 1 + random.below(20),
                          c = 1 + random.below(40);
        const std::size_t g = random.below(4); // 0 = adaptive
        // One in three rounds throws at one random outer index (from the innermost level).
        const bool fail = random.below(3) == 0;
        const std::size_t fail_at = random.below(a);
        std::vector<std::atomic<std::uint32_t>> cells(a * b * c);
        std::size_t caught = SIZE_MAX;
        try {
            auto level3 = [&](std::size_t i, std::size_t j) {
                auto body = [&](std::size_t k) {
                    cells[(i * b + j) * c + k].fetch_add(1, std::memory_order_relaxed);
                    if (fail && i == fail_at && j == b - 1 && k == c - 1)
                        throw at_index(i);
                };
                if (g == 0)
                    fj::parallel_for(std::size_t{0}, c, body);
                else
                    fj::parallel_for(std::size_t{0}, c, body, fj::grain{g});
            };
            fj::parallel_for(pool, std::size_t{0}, a, [&](std::size_t i) {
                fj::parallel_for(std::size_t{0}, b, [&](std::size_t j) { level3(i, j); });
                dog.tick();
            });
        } catch (const at_index& e) {
            caught = e.index;
        }
        if (fail) {
            ASSERT_EQ(caught, fail_at) << "round " << round;
        } else {
            ASSERT_EQ(caught, SIZE_MAX);
        }
        // Every cell below the failing outer index ran exactly once; none ran twice.
        for (std::size_t i = 0; i < a; ++i)
            for (std::size_t x = 0; x < b * c; ++x) {
                const std::uint32_t v = cells[i * b * c + x].load();
                ASSERT_LE(v, 1u);
                if (!fail || i < fail_at) {
                    ASSERT_EQ(v, 1u) << "round " << round << " i " << i;
                }
            }
    }
}

long nested_wait(int depth, fj_test::progress_watchdog& dog) {
    if (depth == 0)
        return 0;
    auto child = fj::fork([depth, &dog] { return nested_wait(depth - 1, dog); });
    fj::reschedule_until([&] { return child.is_ready(); });
    dog.tick();
    return child.get() + 1;
}

TEST_P(algorithms_stress_test, reschedule_until_nested_ten_thousand_deep) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    const int depth = static_cast<int>(scaled(10000));
    auto root = pool.submit([&] { return nested_wait(depth, dog); });
    EXPECT_EQ(fj_test::get_or(root, -1L), depth);
}

TEST_P(algorithms_stress_test, schedulers_come_and_go_while_tasks_cross_between_them) {
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    for (std::size_t round = 0; round < scaled(100); ++round) {
        auto a = std::make_unique<fj::scheduler>(workers());
        auto b = std::make_unique<fj::scheduler>(1 + round % 3);
        // Each watch ends just before its scheduler is destroyed (in either order below).
        std::optional<fj_test::progress_watchdog::watch_handle> watch_a, watch_b;
        watch_a.emplace(dog, *a, "a");
        watch_b.emplace(dog, *b, "b");
        std::vector<fj::future<long>> results;
        for (int t = 0; t < 8; ++t)
            results.push_back(a->submit([&b, t] {
                // a's task waits (helping a) on b, whose task forks on b and hops back to... b
                // only: a may be shut down first below, and a task must not submit to a closed
                // pool.
                return b->submit([t] { return fj_test::fib_fork(10 + t % 4); }).get() +
                       fj::parallel_reduce(
                           0, 100, 0L, [](int i) { return long{i}; }, std::plus<>{});
            }));
        long sum = 0;
        for (auto& r : results)
            sum += fj_test::get_or(r, -1000000L);
        long expected = 0;
        for (int t = 0; t < 8; ++t)
            expected += fj_test::fib_serial(10 + t % 4) + 4950;
        ASSERT_EQ(sum, expected) << "round " << round;
        if (round % 2 == 0) { // destroy in either order
            watch_a.reset();
            a.reset();
            watch_b.reset();
            b.reset();
        } else {
            watch_b.reset();
            b.reset();
            watch_a.reset();
            a.reset();
        }
        dog.tick();
    }
}

TEST_P(algorithms_stress_test, random_composition_graphs) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    fj_test::rng random(99 + workers());
    for (std::size_t round = 0; round < scaled(10000); ++round) {
        const std::size_t n = 1 + random.below(6);
        std::vector<fj::future<long>> layer;
        long expected_sum = 0;
        std::vector<bool> cancelled(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            const long v = static_cast<long>(i) + 1;
            auto f = pool.submit([v] { return v; });
            // Chain 0..2 continuations, each adding 1.
            const std::size_t hops = random.below(3);
            for (std::size_t h = 0; h < hops; ++h)
                f = f.then([](long x) { return x + 1; });
            // Sometimes try to cancel (may or may not win: it must then throw, never run twice).
            if (random.below(4) == 0)
                cancelled[i] = f.cancel();
            if (!cancelled[i])
                expected_sum += v + static_cast<long>(hops);
            layer.push_back(std::move(f));
        }
        if (random.below(2) == 0) {
            auto all = fj::when_all(std::move(layer)).then([](std::vector<fj::future<long>> fs) {
                long s = 0;
                for (auto& f : fs) {
                    try {
                        s += f.get();
                    } catch (const fj::task_cancelled&) {
                    }
                }
                return s;
            });
            ASSERT_EQ(fj_test::get_or(all, -1L), expected_sum) << "round " << round;
        } else {
            auto any = fj::when_any(std::move(layer));
            auto r = fj_test::get_or(any, {});
            ASSERT_LT(r.index, n);
            long s = 0;
            for (auto& f : r.futures) {
                try {
                    s += fj_test::get_or(f, -1000L);
                } catch (const fj::task_cancelled&) {
                }
            }
            ASSERT_EQ(s, expected_sum) << "round " << round;
        }
        dog.tick();
    }
}

INSTANTIATE_TEST_SUITE_P(workers, algorithms_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
