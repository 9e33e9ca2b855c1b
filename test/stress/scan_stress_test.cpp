// Scans under random sizes, grains, forms and steal patterns, each round against a reference:
// integer scans against std::inclusive_scan / std::exclusive_scan (exact), floating-point scans
// against the same scan on one worker (the same bits, whichever blocks were stolen and summed
// first), and scans whose operator throws at a random element (that exception, and every output
// below its block written). Reads are slowed at random elements so that the blocks' paths change
// from round to round.
#include "index_iterator.hpp"
#include "progress_watchdog.hpp"
#include "stress_seed.hpp"
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using fj_test::scaled;

class scan_stress_test : public fj_test::workers_test {};

std::uint64_t bits_of(double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

struct round_shape {
    std::size_t n;
    std::size_t grain; // 0: the default
    std::size_t slow_every;
};

round_shape random_shape(std::mt19937_64& random) {
    const std::size_t n = random() % 4 == 0 ? random() % 300'000 : random() % 40'000;
    const std::size_t grain = random() % 3 == 0 ? 0 : 1 + random() % 5'000;
    return {n, grain, 500 + random() % 5'000};
}

// Reads the input, spinning briefly at every `slow_every`-th element, so that which worker
// reaches which block, and so which blocks are summed before they are scanned, varies. Counts the
// reads in `reads`: more than n means some blocks were summed, then scanned.
struct slowed_reader {
    const std::vector<double>* in;
    std::size_t slow_every;
    std::atomic<std::size_t>* reads;

    double operator()(std::size_t k) const {
        reads->fetch_add(1, std::memory_order_relaxed);
        if (k % slow_every == 0) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
            while (std::chrono::steady_clock::now() < until) {
            }
        }
        return (*in)[k];
    }
};

template <class Scan>
std::vector<double> scanned(std::size_t n, Scan&& scan) {
    std::vector<double> out(n);
    scan(out);
    return out;
}

TEST_P(scan_stress_test, results_match_the_serial_scan_and_one_worker_bits) {
    fj::scheduler pool(workers());
    fj::scheduler one(1);
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    std::mt19937_64 random(seed + workers());
    std::size_t rounds_with_summed_blocks = 0;
    for (std::size_t round = 0; round < scaled(150); ++round) {
        const round_shape s = random_shape(random);
        const fj::grain g{s.grain == 0 ? std::size_t{1} << 62 : s.grain};
        const bool default_grain = s.grain == 0;
        SCOPED_TRACE("round " + std::to_string(round) + ", n " + std::to_string(s.n) + ", grain " +
                     std::to_string(s.grain));

        // Integers: exact against the standard library, in place half the time.
        std::vector<std::int64_t> ints(s.n);
        for (auto& x : ints)
            x = static_cast<std::int64_t>(random() % 2001) - 1000;
        std::vector<std::int64_t> expected(s.n);
        const bool exclusive = random() % 2 == 0;
        if (exclusive)
            std::exclusive_scan(ints.begin(), ints.end(), expected.begin(), std::int64_t{7});
        else
            std::inclusive_scan(ints.begin(), ints.end(), expected.begin());
        const bool in_place = random() % 2 == 0;
        std::vector<std::int64_t> out_of_place(s.n);
        auto out = in_place ? ints.begin() : out_of_place.begin();
        if (exclusive && default_grain)
            fj::exclusive_scan(pool, ints.begin(), ints.end(), out, std::int64_t{7});
        else if (exclusive)
            fj::exclusive_scan(pool, ints.begin(), ints.end(), out, std::int64_t{7}, g);
        else if (default_grain)
            fj::inclusive_scan(pool, ints.begin(), ints.end(), out);
        else
            fj::inclusive_scan(pool, ints.begin(), ints.end(), out, g);
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(),
                               in_place ? ints.begin() : out_of_place.begin()))
            << (exclusive ? "exclusive" : "inclusive") << (in_place ? ", in place" : "");

        // Doubles: the same bits as on one worker, whatever was stolen.
        std::vector<double> reals(s.n);
        for (auto& x : reals)
            x = static_cast<double>(random() % 100'000) / 997.0 - 50.0;
        std::atomic<std::size_t> reads{0};
        auto run = [&](fj::scheduler& p, bool slow) {
            reads = 0;
            return scanned(s.n, [&](std::vector<double>& o) {
                const slowed_reader read{&reals, slow ? s.slow_every : s.n + 1, &reads};
                const fj_test::index_range v(read, s.n);
                if (default_grain)
                    fj::inclusive_scan(p, v.begin(), v.end(), o.begin(), std::plus<>{}, 0.5);
                else
                    fj::inclusive_scan(p, v.begin(), v.end(), o.begin(), std::plus<>{}, 0.5, g);
            });
        };
        // On the worker: a call from this thread would run on it as a caller, and the one
        // worker could steal from it (docs/design/callers.md).
        auto on_worker = one.submit([&] { return run(one, false); });
        on_worker.wait(); // not get() alone: it could run the task here (take-over)
        const auto reference = on_worker.get();
        ASSERT_EQ(reads.load(), s.n) << "one worker reads every element once";
        const auto parallel = run(pool, true);
        rounds_with_summed_blocks += reads.load() > s.n;
        for (std::size_t i = 0; i < s.n; ++i)
            ASSERT_EQ(bits_of(parallel[i]), bits_of(reference[i])) << "element " << i;
        dog.tick();
    }
    // Two paths were compared, not one: with several workers some blocks were stolen.
    if (workers() > 1) {
        EXPECT_GT(rounds_with_summed_blocks, 0u);
    }
}

struct thrown_at : std::runtime_error {
    explicit thrown_at(std::int64_t v) : std::runtime_error("op"), value(v) {}
    std::int64_t value;
};

TEST_P(scan_stress_test, the_lowest_throwing_element_wins_and_outputs_before_it_are_written) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    std::mt19937_64 random(seed + 17 * workers());
    for (std::size_t round = 0; round < scaled(150); ++round) {
        const std::size_t n = 1 + random() % 30'000;
        const std::size_t grain = 1 + random() % 2'000;
        // Elements are their position plus one, negated from `bad` on; the operator throws on a
        // negative operand, so the lowest of those is where a serial scan throws. Block sums and
        // carries only ever hold positive values (a block with a negative element throws before it
        // has a sum), so a combine never throws.
        const std::size_t bad = random() % n;
        std::vector<std::int64_t> in(n);
        for (std::size_t i = 0; i < n; ++i)
            in[i] = (i < bad ? 1 : -1) * static_cast<std::int64_t>(i + 1);
        std::vector<std::int64_t> out(n, -1);
        auto op = [](std::int64_t acc, std::int64_t x) {
            if (x < 0)
                throw thrown_at(-x);
            return acc + x;
        };
        SCOPED_TRACE("round " + std::to_string(round) + ", n " + std::to_string(n) + ", grain " +
                     std::to_string(grain) + ", bad " + std::to_string(bad));
        std::int64_t caught = 0;
        try {
            fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), op, std::int64_t{0},
                               fj::grain{grain});
        } catch (const thrown_at& e) {
            caught = e.value;
        }
        ASSERT_EQ(caught, static_cast<std::int64_t>(bad + 1));
        // Blocks hold at most `grain` elements, so the block of the bad element starts after
        // bad - grain: everything up to there belongs to earlier blocks and is written.
        std::int64_t running = 0;
        for (std::size_t i = 0; i + grain <= bad; ++i) {
            running += in[i];
            ASSERT_EQ(out[i], running) << "element " << i;
        }
        dog.tick();
    }
}

INSTANTIATE_TEST_SUITE_P(workers, scan_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
