// fj::parallel_reduce: results for every shape of range and grain; bit-for-bit determinism across
// worker counts and runs; the serial order for non-commutative reductions; the three forms; bad
// input; exceptions.
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

class parallel_reduce_test : public fj_test::workers_test {};

const std::vector<std::size_t> k_sizes = {0, 1, 2, 3, 7, 64, 65, 1000, 1025, 4099, 100003};

TEST_P(parallel_reduce_test, sums_every_index_once) {
    fj::scheduler pool(workers());
    for (std::size_t n : k_sizes)
        for (std::size_t g : {0, 1, 7, 1000}) {
            const auto sum = [&] {
                auto map = [](std::size_t i) { return static_cast<std::uint64_t>(i); };
                if (g == 0)
                    return fj::parallel_reduce(pool, std::size_t{0}, n, std::uint64_t{0}, map,
                                               std::plus<>{});
                return fj::parallel_reduce(pool, std::size_t{0}, n, std::uint64_t{0}, map,
                                           std::plus<>{}, fj::grain{g});
            }();
            EXPECT_EQ(sum, n == 0 ? 0 : n * (n - 1) / 2) << "n=" << n << " grain=" << g;
        }
}

// A sum whose rounding depends on the order of additions.
double harmonic_like(fj::scheduler& pool, std::size_t n, std::size_t grain) {
    auto term = [](std::size_t k) { return 1.0 / std::pow(static_cast<double>(k) + 1.0, 1.1); };
    if (grain == 0)
        return fj::parallel_reduce(pool, std::size_t{0}, n, 0.0, term, std::plus<>{});
    return fj::parallel_reduce(pool, std::size_t{0}, n, 0.0, term, std::plus<>{}, fj::grain{grain});
}

std::uint64_t bits_of(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

TEST(parallel_reduce_determinism, same_bits_for_any_worker_count_and_any_run) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::size_t n = fj_test::scaled(2'000'000);
    for (std::size_t grain : {0, 1000, 4097}) {
        std::uint64_t reference = 0;
        bool have_reference = false;
        for (std::size_t workers : {1, 2, 3, 7}) {
            fj::scheduler pool(workers);
            for (int run = 0; run < 3; ++run) {
                const std::uint64_t bits = bits_of(harmonic_like(pool, n, grain));
                if (!have_reference) {
                    reference = bits;
                    have_reference = true;
                }
                ASSERT_EQ(bits, reference)
                    << "grain " << grain << ", " << workers << " workers, run " << run;
            }
        }
    }
    // And the order really matters for this sum: a plain left fold differs in the last bits.
    fj::scheduler pool(1);
    double serial = 0.0;
    for (std::size_t k = 0; k < n; ++k)
        serial += 1.0 / std::pow(static_cast<double>(k) + 1.0, 1.1);
    EXPECT_NEAR(serial, harmonic_like(pool, n, 0), 1e-9 * serial);
}

TEST_P(parallel_reduce_test, non_commutative_reduce_gives_the_serial_order) {
    fj::scheduler pool(workers());
    const std::size_t n = 3001;
    std::string serial;
    for (std::size_t i = 0; i < n; ++i)
        serial += std::to_string(i) + ",";
    for (std::size_t g : {0, 1, 5, 64}) {
        auto map = [](std::size_t i) { return std::to_string(i) + ","; };
        auto concat = [](std::string a, const std::string& b) { return a + b; };
        const std::string joined =
            g == 0 ? fj::parallel_reduce(pool, std::size_t{0}, n, std::string{}, map, concat)
                   : fj::parallel_reduce(pool, std::size_t{0}, n, std::string{}, map, concat,
                                         fj::grain{g});
        EXPECT_EQ(joined, serial) << "grain " << g;
    }
}

TEST_P(parallel_reduce_test, blocked_range_and_iterator_forms) {
    fj::scheduler pool(workers());
    std::vector<int> v(10007);
    std::iota(v.begin(), v.end(), 1);
    const long expected = 10007L * 10008L / 2;

    EXPECT_EQ(fj::parallel_reduce(
                  pool, v.begin(), v.end(), 0L, [](int x) { return long{x}; }, std::plus<>{}),
              expected);
    EXPECT_EQ(fj::parallel_reduce(
                  pool, v.cbegin(), v.cend(), 0L, [](const int& x) { return long{x}; },
                  std::plus<>{}, fj::grain{3}),
              expected);
    EXPECT_EQ(fj::parallel_reduce(
                  pool, fj::blocked_range<std::size_t>{0, v.size(), 100}, 0L,
                  [&](fj::blocked_range<std::size_t> r, long acc) {
                      EXPECT_LE(r.size(), 100u);
                      for (std::size_t i = r.begin(); i != r.end(); ++i)
                          acc += v[i];
                      return acc;
                  },
                  std::plus<>{}),
              expected);
    EXPECT_EQ(fj::parallel_reduce(
                  fj::blocked_range<int>{0, 0}, 7,
                  [](fj::blocked_range<int>, int acc) { return acc + 1; }, std::plus<>{}),
              7); // empty: the identity, no call
    // Maximum: a reduce whose identity is not 0.
    EXPECT_EQ(fj::parallel_reduce(
                  pool, 0, 1000, -1, [](int i) { return (i * 37) % 1000; },
                  [](int a, int b) { return a > b ? a : b; }),
              999);
}

TEST(parallel_reduce_bad_input, is_rejected_with_invalid_argument) {
    auto id = [](int i) { return i; };
    EXPECT_THROW(fj::parallel_reduce(5, 4, 0, id, std::plus<>{}), std::invalid_argument);
    EXPECT_THROW(fj::parallel_reduce(0, 4, 0, id, std::plus<>{}, fj::grain{0}),
                 std::invalid_argument);
    std::vector<int> v(3);
    EXPECT_THROW(fj::parallel_reduce(v.end(), v.begin(), 0, id, std::plus<>{}),
                 std::invalid_argument);
    int (*null_map)(int) = nullptr;
    EXPECT_THROW(fj::parallel_reduce(0, 4, 0, null_map, std::plus<>{}), std::invalid_argument);
    EXPECT_THROW(fj::parallel_reduce(0, 4, 0, id, std::function<int(int, int)>{}),
                 std::invalid_argument);
}

using fj_test::at_index;

TEST_P(parallel_reduce_test, the_lowest_throwing_index_wins) {
    fj::scheduler pool(workers());
    for (std::size_t g : {0, 1, 16}) {
        for (std::size_t lowest : {0, 77, 4999}) {
            std::size_t caught = SIZE_MAX;
            try {
                auto map = [&](std::size_t i) -> long {
                    if (i == lowest || i == lowest + 1000 || i == 4999)
                        throw at_index(i);
                    return 1;
                };
                if (g == 0)
                    (void)fj::parallel_reduce(pool, std::size_t{0}, std::size_t{5000}, 0L, map,
                                              std::plus<>{});
                else
                    (void)fj::parallel_reduce(pool, std::size_t{0}, std::size_t{5000}, 0L, map,
                                              std::plus<>{}, fj::grain{g});
            } catch (const at_index& e) {
                caught = e.index;
            }
            EXPECT_EQ(caught, lowest) << "grain " << g;
        }
    }
    // A throwing combine reaches the caller too.
    EXPECT_THROW((void)fj::parallel_reduce(
                     pool, 0, 100, 0, [](int i) { return i; },
                     [](int a, int b) -> int {
                         if (a + b > 1000)
                             throw std::overflow_error("too big");
                         return a + b;
                     },
                     fj::grain{1}),
                 std::overflow_error);
}

INSTANTIATE_TEST_SUITE_P(workers, parallel_reduce_test, ::testing::Values(1, 2, 3, 7),
                         fj_test::worker_count_name);

} // namespace
