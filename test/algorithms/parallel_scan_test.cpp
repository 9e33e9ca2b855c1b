// fj::inclusive_scan, fj::exclusive_scan and fj::parallel_scan: the serial scan's results for every
// size and grain (0, 1, primes, block edges, 10^6), in place, with a non-commutative operator;
// bit-identical floating-point results across worker counts and runs; the lowest throwing position
// wins; bad input.
#include "index_iterator.hpp"
#include "support.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

class parallel_scan_test : public fj_test::workers_test {};

std::vector<std::size_t> sizes() {
    return {0, 1, 2, 3, 7, 13, 1021, 1024, 1025, 4099, 100003, fj_test::scaled(1'000'000)};
}

std::vector<std::int64_t> input(std::size_t n) {
    std::vector<std::int64_t> v(n);
    fj_test::rng r(n + 1);
    for (auto& x : v)
        x = static_cast<std::int64_t>(r.below(1000)) - 500;
    return v;
}

// Runs `scan(grain)` for the default grain (0) and a few explicit ones.
template <class Scan>
void for_grains(Scan&& scan) {
    for (std::size_t g : {0, 1, 7, 1000})
        scan(g);
}

TEST_P(parallel_scan_test, inclusive_matches_the_serial_scan) {
    fj::scheduler pool(workers());
    for (std::size_t n : sizes()) {
        const auto in = input(n);
        std::vector<std::int64_t> expected(n), with_init(n);
        std::inclusive_scan(in.begin(), in.end(), expected.begin());
        std::inclusive_scan(in.begin(), in.end(), with_init.begin(), std::plus<>{},
                            std::int64_t{17});
        for_grains([&](std::size_t g) {
            if (g == 1 && n > 100003)
                return; // a million one-element blocks: slow under sanitizers, nothing new
            std::vector<std::int64_t> out(n, -1), out2(n, -1), out3(n, -1);
            if (g == 0) {
                auto end = fj::inclusive_scan(pool, in.begin(), in.end(), out.begin());
                EXPECT_EQ(end, out.end());
                fj::inclusive_scan(pool, in.begin(), in.end(), out2.begin(), std::plus<>{});
                fj::inclusive_scan(pool, in.begin(), in.end(), out3.begin(), std::plus<>{},
                                   std::int64_t{17});
            } else {
                fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), fj::grain{g});
                fj::inclusive_scan(pool, in.begin(), in.end(), out2.begin(), std::plus<>{},
                                   fj::grain{g});
                fj::inclusive_scan(pool, in.begin(), in.end(), out3.begin(), std::plus<>{},
                                   std::int64_t{17}, fj::grain{g});
            }
            EXPECT_EQ(out, expected) << "n=" << n << " grain=" << g;
            EXPECT_EQ(out2, expected) << "n=" << n << " grain=" << g;
            EXPECT_EQ(out3, with_init) << "n=" << n << " grain=" << g;
        });
    }
}

TEST_P(parallel_scan_test, exclusive_matches_the_serial_scan) {
    fj::scheduler pool(workers());
    for (std::size_t n : sizes()) {
        const auto in = input(n);
        std::vector<std::int64_t> expected(n);
        std::exclusive_scan(in.begin(), in.end(), expected.begin(), std::int64_t{-3});
        for_grains([&](std::size_t g) {
            if (g == 1 && n > 100003)
                return;
            std::vector<std::int64_t> out(n, -1), out2(n, -1);
            if (g == 0) {
                auto end =
                    fj::exclusive_scan(pool, in.begin(), in.end(), out.begin(), std::int64_t{-3});
                EXPECT_EQ(end, out.end());
                fj::exclusive_scan(pool, in.begin(), in.end(), out2.begin(), std::int64_t{-3},
                                   std::plus<>{});
            } else {
                fj::exclusive_scan(pool, in.begin(), in.end(), out.begin(), std::int64_t{-3},
                                   fj::grain{g});
                fj::exclusive_scan(pool, in.begin(), in.end(), out2.begin(), std::int64_t{-3},
                                   std::plus<>{}, fj::grain{g});
            }
            EXPECT_EQ(out, expected) << "n=" << n << " grain=" << g;
            EXPECT_EQ(out2, expected) << "n=" << n << " grain=" << g;
        });
    }
}

TEST_P(parallel_scan_test, in_place) {
    fj::scheduler pool(workers());
    for (std::size_t n : {std::size_t{1}, std::size_t{1025}, std::size_t{100003}}) {
        const auto in = input(n);
        std::vector<std::int64_t> inc(n), exc(n);
        std::inclusive_scan(in.begin(), in.end(), inc.begin());
        std::exclusive_scan(in.begin(), in.end(), exc.begin(), std::int64_t{4});
        for_grains([&](std::size_t g) {
            auto a = in, b = in;
            if (g == 0) {
                fj::inclusive_scan(pool, a.begin(), a.end(), a.begin());
                fj::exclusive_scan(pool, b.begin(), b.end(), b.begin(), std::int64_t{4});
            } else {
                fj::inclusive_scan(pool, a.begin(), a.end(), a.begin(), fj::grain{g});
                fj::exclusive_scan(pool, b.begin(), b.end(), b.begin(), std::int64_t{4},
                                   fj::grain{g});
            }
            EXPECT_EQ(a, inc) << "n=" << n << " grain=" << g;
            EXPECT_EQ(b, exc) << "n=" << n << " grain=" << g;
        });
    }
}

// Affine maps x -> a*x + b (mod 2^64) under composition: associative, not commutative, and exact,
// so any reordering of operands would show.
struct affine {
    std::uint64_t a, b;
    friend bool operator==(const affine&, const affine&) = default;
};
struct compose {
    affine operator()(const affine& f, const affine& g) const { // g after f
        return {g.a * f.a, g.a * f.b + g.b};
    }
};

TEST_P(parallel_scan_test, non_commutative_operator_keeps_the_order) {
    fj::scheduler pool(workers());
    const std::size_t n = 50'000;
    std::vector<affine> in(n);
    fj_test::rng r(7);
    for (auto& f : in)
        f = {r.next() | 1, r.next()};
    std::vector<affine> expected(n), expected_ex(n);
    std::inclusive_scan(in.begin(), in.end(), expected.begin(), compose{});
    std::exclusive_scan(in.begin(), in.end(), expected_ex.begin(), affine{3, 4}, compose{});
    for_grains([&](std::size_t g) {
        std::vector<affine> out(n), out_ex(n);
        if (g == 0) {
            fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), compose{});
            fj::exclusive_scan(pool, in.begin(), in.end(), out_ex.begin(), affine{3, 4}, compose{});
        } else {
            fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), compose{}, fj::grain{g});
            fj::exclusive_scan(pool, in.begin(), in.end(), out_ex.begin(), affine{3, 4}, compose{},
                               fj::grain{g});
        }
        EXPECT_TRUE(out == expected) << "grain=" << g;
        EXPECT_TRUE(out_ex == expected_ex) << "grain=" << g;
    });
}

std::uint64_t bits_of(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// A scan whose rounding depends on the order of additions.
std::vector<std::uint64_t> scan_bits(fj::scheduler& pool, const std::vector<double>& in,
                                     std::size_t grain) {
    std::vector<double> out(in.size());
    if (grain == 0)
        fj::inclusive_scan(pool, in.begin(), in.end(), out.begin());
    else
        fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), fj::grain{grain});
    std::vector<std::uint64_t> bits(out.size());
    for (std::size_t i = 0; i < out.size(); ++i)
        bits[i] = bits_of(out[i]);
    return bits;
}

TEST(parallel_scan_determinism, same_bits_for_any_worker_count_and_any_run) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::size_t n = fj_test::scaled(1'000'000);
    std::vector<double> in(n);
    for (std::size_t k = 0; k < n; ++k)
        in[k] = 1.0 / std::pow(static_cast<double>(k) + 1.0, 1.1) * ((k % 3 == 0) ? -1.0 : 1.0);
    for (std::size_t grain : {0, 977, 4097}) {
        std::vector<std::uint64_t> reference;
        for (std::size_t workers : {1, 2, 3, 4}) {
            fj::scheduler pool(workers);
            for (int run = 0; run < 3; ++run) {
                auto bits = scan_bits(pool, in, grain);
                if (reference.empty())
                    reference = std::move(bits);
                else
                    ASSERT_TRUE(bits == reference)
                        << "grain " << grain << ", " << workers << " workers, run " << run;
            }
        }
    }
    // And the order really matters: the tree's sums are close to a plain serial scan but the
    // comparison above would catch any change of association.
    fj::scheduler pool(2);
    std::vector<double> serial(n), parallel(n);
    std::inclusive_scan(in.begin(), in.end(), serial.begin());
    fj::inclusive_scan(pool, in.begin(), in.end(), parallel.begin());
    EXPECT_NEAR(serial.back(), parallel.back(), 1e-9);
}

// Reads the input, counting every read and, when asked, holding the read of element 0 until a
// read from the upper half has started: with two workers that upper half can only have been
// stolen while its left half ran, which forces the sum-then-scan path.
class read_probe {
public:
    explicit read_probe(const std::vector<double>& in) : m_in(in) {}

    fj_test::index_range<read_probe> view(bool hold_first) {
        m_reads = 0;
        m_upper_read = false;
        m_hold_first = hold_first;
        return {*this, m_in.size()};
    }
    double operator()(std::size_t i) const {
        m_reads.fetch_add(1, std::memory_order_relaxed);
        if (i >= m_in.size() / 2)
            m_upper_read.store(true);
        if (i == 0 && m_hold_first)
            (void)fj_test::spin_until([&] { return m_upper_read.load(); },
                                      std::chrono::seconds(10));
        return m_in[i];
    }
    std::size_t reads() const { return m_reads.load(); }
    bool upper_read() const { return m_upper_read.load(); }

private:
    const std::vector<double>& m_in;
    bool m_hold_first = false; // set before a scan starts; the scan's tasks only read it
    mutable std::atomic<std::size_t> m_reads{0};
    mutable std::atomic<bool> m_upper_read{false};
};

template <class Scan>
std::vector<std::uint64_t> bits_from(std::size_t n, Scan&& scan) {
    std::vector<double> out(n);
    scan(out);
    std::vector<std::uint64_t> bits(n);
    for (std::size_t i = 0; i < n; ++i)
        bits[i] = bits_of(out[i]);
    return bits;
}

TEST(parallel_scan_passes, one_worker_reads_once_and_a_stolen_half_gives_the_same_bits) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::size_t n = 1 << 16;
    std::vector<double> in(n);
    for (std::size_t k = 0; k < n; ++k)
        in[k] = 1.0 / (static_cast<double>(k) + 3.0) * ((k % 5 == 0) ? -1.0 : 1.0);
    read_probe probe(in);
    using scan_fn = std::function<void(fj::scheduler&, bool, std::vector<double>&)>;
    const std::vector<std::pair<const char*, scan_fn>> scans = {
        {"inclusive",
         [&](fj::scheduler& pool, bool hold, std::vector<double>& out) {
             auto v = probe.view(hold);
             fj::inclusive_scan(pool, v.begin(), v.end(), out.begin(), fj::grain{1024});
         }},
        {"inclusive with init",
         [&](fj::scheduler& pool, bool hold, std::vector<double>& out) {
             auto v = probe.view(hold);
             fj::inclusive_scan(pool, v.begin(), v.end(), out.begin(), std::plus<>{}, 0.25,
                                fj::grain{1024});
         }},
        {"exclusive",
         [&](fj::scheduler& pool, bool hold, std::vector<double>& out) {
             auto v = probe.view(hold);
             fj::exclusive_scan(pool, v.begin(), v.end(), out.begin(), 0.25, fj::grain{1024});
         }},
    };
    for (const auto& [name, scan] : scans) {
        fj::scheduler one(1);
        // On the worker: from this thread the call would run on it as a caller, and the worker
        // could steal a block from it (docs/design/callers.md). wait() first: get() alone could
        // run the task here (take-over).
        const auto reference = bits_from(n, [&](std::vector<double>& out) {
            auto on_worker = one.submit([&] { scan(one, false, out); });
            on_worker.wait();
            on_worker.get();
        });
        EXPECT_EQ(probe.reads(), n) << name << ": one worker reads every element once";

        fj::scheduler two(2);
        const auto stolen = bits_from(n, [&](std::vector<double>& out) { scan(two, true, out); });
        EXPECT_TRUE(probe.upper_read()) << name;
        EXPECT_GT(probe.reads(), n) << name << ": the stolen half was summed, then scanned";
        EXPECT_TRUE(stolen == reference) << name << ": the bits depend on who scanned what";
    }
}

TEST_P(parallel_scan_test, parallel_scan_body_form) {
    fj::scheduler pool(workers());
    for (std::size_t n : sizes()) {
        const auto in = input(n);
        std::vector<std::int64_t> expected(n);
        std::inclusive_scan(in.begin(), in.end(), expected.begin());
        for (std::size_t g : {0, 1, 1000}) {
            if (g == 1 && n > 100003)
                continue;
            std::vector<std::int64_t> out(n, -1);
            std::atomic<long> final_elements{0};
            auto body = [&](const fj::blocked_range<std::size_t>& r, std::int64_t sum,
                            bool is_final) {
                for (std::size_t i = r.begin(); i != r.end(); ++i) {
                    sum += in[i];
                    if (is_final)
                        out[i] = sum;
                }
                if (is_final)
                    final_elements.fetch_add(static_cast<long>(r.size()));
                return sum;
            };
            auto plus = [](std::int64_t a, std::int64_t b) { return a + b; };
            const auto range = g == 0 ? fj::blocked_range<std::size_t>{0, n}
                                      : fj::blocked_range<std::size_t>{0, n, g};
            const std::int64_t total = fj::parallel_scan(pool, range, std::int64_t{0}, body, plus);
            EXPECT_EQ(out, expected) << "n=" << n << " grain=" << g;
            EXPECT_EQ(total, n == 0 ? 0 : expected.back()) << "n=" << n;
            EXPECT_EQ(final_elements.load(), static_cast<long>(n)) << "each element once";
        }
    }
}

TEST(parallel_scan_forms, without_a_scheduler_and_inside_a_task) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const auto in = input(5000);
    std::vector<std::int64_t> expected(in.size()), out(in.size()), out2(in.size());
    std::inclusive_scan(in.begin(), in.end(), expected.begin());
    fj::inclusive_scan(in.begin(), in.end(), out.begin()); // the default scheduler
    EXPECT_EQ(out, expected);
    fj::scheduler pool(2);
    pool.execute([&] {
        fj::inclusive_scan(in.begin(), in.end(), out2.begin(), fj::grain{100});
    }); // the current one, nested in a task
    EXPECT_EQ(out2, expected);
    const std::vector<int> small{1, 2, 3};
    std::vector<long> widened(3);
    fj::exclusive_scan(small.begin(), small.end(), widened.begin(), 10L);
    EXPECT_EQ(widened, (std::vector<long>{10, 11, 13}));
    const long total = fj::parallel_scan(
        fj::blocked_range<int>{0, 3}, 0L,
        [&](fj::blocked_range<int> r, long sum, bool) {
            for (int i = r.begin(); i != r.end(); ++i)
                sum += small[static_cast<std::size_t>(i)];
            return sum;
        },
        [](long a, long b) { return a + b; });
    EXPECT_EQ(total, 6);
}

// An element that throws when it is used at one of the marked positions.
struct item {
    std::int64_t value;
    bool bad;
    explicit operator std::int64_t() const {
        if (bad)
            throw std::runtime_error(std::to_string(value));
        return value;
    }
};
struct add_item {
    std::int64_t operator()(std::int64_t acc, const item& x) const {
        return acc + static_cast<std::int64_t>(x);
    }
    std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};

TEST_P(parallel_scan_test, the_lowest_throwing_position_wins) {
    fj::scheduler pool(workers());
    fj_test::rng r(workers());
    const int rounds = static_cast<int>(fj_test::scaled(40));
    for (int round = 0; round < rounds; ++round) {
        const std::size_t n = 1 + r.below(30000);
        std::vector<item> in(n);
        for (std::size_t i = 0; i < n; ++i)
            in[i] = {static_cast<std::int64_t>(i), false};
        const std::size_t first_bad = r.below(n);
        in[first_bad].bad = true;
        for (int extra = 0; extra < 3; ++extra) // later failures, which must lose
            in[first_bad + r.below(n - first_bad)].bad = true;
        const std::size_t g = round % 2 == 0 ? 0 : 1 + r.below(500);
        std::vector<std::int64_t> out(n, -1);
        try {
            if (round % 3 == 0)
                fj::exclusive_scan(pool, in.begin(), in.end(), out.begin(), std::int64_t{0},
                                   add_item{}, fj::grain{g == 0 ? 64 : g});
            else if (g == 0)
                fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), add_item{},
                                   std::int64_t{0});
            else
                fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), add_item{},
                                   std::int64_t{0}, fj::grain{g});
            ADD_FAILURE() << "no exception, n=" << n;
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(e.what(), std::to_string(first_bad))
                << "n=" << n << " grain=" << g << " round " << round;
        }
    }
}

TEST_P(parallel_scan_test, outputs_below_the_failure_are_written_with_one_element_blocks) {
    fj::scheduler pool(workers());
    const std::size_t n = 3000, bad = 1234;
    std::vector<item> in(n);
    for (std::size_t i = 0; i < n; ++i)
        in[i] = {1, i == bad || i == 2500};
    std::vector<std::int64_t> out(n, -1);
    EXPECT_THROW(fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), add_item{},
                                    std::int64_t{0}, fj::grain{1}),
                 std::runtime_error);
    for (std::size_t i = 0; i < bad; ++i)
        ASSERT_EQ(out[i], static_cast<std::int64_t>(i + 1)) << i;
}

TEST_P(parallel_scan_test, a_throwing_parallel_scan_body_reports_the_lowest_block) {
    fj::scheduler pool(workers());
    const std::size_t n = 100'000;
    for (bool in_final : {false, true}) {
        auto body = [&](fj::blocked_range<std::size_t> r, long sum, bool is_final) {
            if (is_final == in_final && r.begin() <= 40'000 && 40'000 < r.end())
                throw std::runtime_error("low");
            if (is_final == in_final && r.begin() <= 70'000 && 70'000 < r.end())
                throw std::runtime_error("high");
            return sum + static_cast<long>(r.size());
        };
        try {
            fj::parallel_scan(pool, fj::blocked_range<std::size_t>{0, n, 1000}, 0L, body,
                              [](long a, long b) { return a + b; });
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "low") << (in_final ? "final scan" : "pre-scan");
        }
    }
}

TEST(parallel_scan_bad_input, is_rejected_with_invalid_argument) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler pool(2);
    std::vector<int> v(10), out(10);
    EXPECT_THROW(fj::inclusive_scan(pool, v.end(), v.begin(), out.begin()), std::invalid_argument);
    EXPECT_THROW(fj::exclusive_scan(pool, v.end(), v.begin(), out.begin(), 0),
                 std::invalid_argument);
    EXPECT_THROW(fj::inclusive_scan(pool, v.begin(), v.end(), out.begin(), fj::grain{0}),
                 std::invalid_argument);
    std::function<int(int, int)> empty;
    EXPECT_THROW(fj::inclusive_scan(pool, v.begin(), v.end(), out.begin(), empty),
                 std::invalid_argument);
    EXPECT_THROW((void)fj::blocked_range<int>(5, 1), std::invalid_argument);
    try {
        fj::inclusive_scan(pool, v.end(), v.begin(), out.begin());
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("fj::inclusive_scan: reversed iterator range"),
                  std::string::npos)
            << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(workers, parallel_scan_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
