// The whole scheduler under a mixed, randomised load: random trees that mix fork, join, submit to
// the same or another scheduler, help-while-waiting and exceptions, driven by several outside
// threads at once. Every result must equal the serial evaluation of the same tree.
#include "support.hpp"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

struct leaf_error : std::runtime_error {
    explicit leaf_error(long v) : std::runtime_error("leaf"), value(v) {}
    long value;
};

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

// The serial meaning of a tree node: leaves are seed-derived values; one leaf in 16 "throws",
// which its parent catches and counts as -value.
long serial_value(std::uint64_t seed, int depth) {
    if (depth == 0) {
        const long v = static_cast<long>(mix(seed) % 1000);
        return (mix(seed + 1) % 16 == 0) ? -v : v;
    }
    return serial_value(mix(seed * 2 + 1), depth - 1) + serial_value(mix(seed * 2 + 2), depth - 1) +
           1;
}

long leaf(std::uint64_t seed) {
    const long v = static_cast<long>(mix(seed) % 1000);
    if (mix(seed + 1) % 16 == 0)
        throw leaf_error(v);
    return v;
}

long parallel_value(fj::scheduler& other, std::uint64_t seed, int depth);

long child_value(fj::scheduler& other, std::uint64_t seed, int depth) {
    if (depth == 0) {
        try {
            return leaf(seed);
        } catch (const leaf_error& e) {
            return -e.value;
        }
    }
    return parallel_value(other, seed, depth);
}

// The same tree, each node evaluated by a strategy picked from its seed.
long parallel_value(fj::scheduler& other, std::uint64_t seed, int depth) {
    const std::uint64_t l = mix(seed * 2 + 1);
    const std::uint64_t r = mix(seed * 2 + 2);
    switch (mix(seed + 99) % 5) {
    case 0: { // fork + get
        auto left = fj::fork([&other, l, depth] { return child_value(other, l, depth - 1); });
        const long right = child_value(other, r, depth - 1);
        return left.get() + right + 1;
    }
    case 1: { // join
        auto [a, b] = fj::join([&other, l, depth] { return child_value(other, l, depth - 1); },
                               [&other, r, depth] { return child_value(other, r, depth - 1); });
        return a + b + 1;
    }
    case 2: { // submit to the current scheduler, then help with reschedule_until
        auto left = fj::current_scheduler().submit(
            [&other, l, depth] { return child_value(other, l, depth - 1); });
        const long right = child_value(other, r, depth - 1);
        fj::reschedule_until([&] { return left.is_ready(); });
        return left.get() + right + 1;
    }
    case 3: { // hop to the other scheduler for one branch (only near the leaves: bounded nesting)
        if (depth <= 3) {
            fj::scheduler& here = fj::current_scheduler();
            auto left = other.submit([&here, l, depth] { return child_value(here, l, depth - 1); });
            const long right = child_value(other, r, depth - 1);
            return left.get() + right + 1;
        }
        [[fallthrough]];
    }
    default: { // exceptions through join: let a leaf's error escape and catch it here
        if (depth == 1) {
            long a = 0;
            long b = 0;
            try {
                auto [x, y] = fj::join([l] { return leaf(l); }, [r] { return leaf(r); });
                a = x;
                b = y;
            } catch (const leaf_error&) {
                // Recompute serially: which of the two threw is not observable from join.
                a = child_value(other, l, 0);
                b = child_value(other, r, 0);
            }
            return a + b + 1;
        }
        return child_value(other, l, depth - 1) + child_value(other, r, depth - 1) + 1;
    }
    }
}

class scheduler_stress_test : public fj_test::workers_test {};

// Random mixed trees, submitted by 3 outside threads at once to two schedulers that feed each
// other, all match the serial evaluation.
TEST_P(scheduler_stress_test, MixedRandomTreesMatchSerial) {
    fj::scheduler a(workers());
    fj::scheduler b(workers());
    constexpr int depth = 9;
    const std::size_t trees_per_thread = fj_test::scaled(80);
    std::atomic<std::size_t> mismatches{0};
    std::atomic<std::size_t> hung{0};
    std::vector<std::thread> drivers;
    for (int d = 0; d < 3; ++d)
        drivers.emplace_back([&, d] {
            for (std::size_t i = 0; i < trees_per_thread; ++i) {
                const std::uint64_t seed = mix(static_cast<std::uint64_t>(d) * 1000 + i + 1);
                fj::scheduler& here = (i + static_cast<std::size_t>(d)) % 2 == 0 ? a : b;
                fj::scheduler& there = &here == &a ? b : a;
                auto f = here.submit([&there, seed] { return parallel_value(there, seed, depth); });
                if (f.wait_for(fj_test::k_deadline) != std::future_status::ready) {
                    hung.fetch_add(1);
                    return;
                }
                if (f.get() != serial_value(seed, depth))
                    mismatches.fetch_add(1);
            }
        });
    for (auto& t : drivers)
        t.join();
    EXPECT_EQ(hung.load(), 0u) << "a tree did not finish within " << fj_test::k_deadline.count()
                               << " s";
    EXPECT_EQ(mismatches.load(), 0u);
}

// Outside threads use one scheduler through every entry point at once (submit+get, join from
// outside, reschedule_until, try_run_one, dropped futures) and every result is right.
TEST_P(scheduler_stress_test, ManyOutsideThreadsAllEntryPoints) {
    fj::scheduler sched(workers());
    const std::size_t iterations = fj_test::scaled(400);
    std::atomic<std::size_t> errors{0};
    std::atomic<std::size_t> dropped_ran{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (std::size_t i = 0; i < iterations; ++i) {
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
