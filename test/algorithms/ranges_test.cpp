// Ranges: blocked_range over integers, pointers and iterators; blocked_range2d / 3d; a user's own
// splittable range; the body-style parallel_reduce. Every element is visited exactly once, results
// match the serial ones, the first piece in serial order that threw wins, stops stop, and bad
// ranges are rejected where they are made.
#include "support.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <numeric>
#include <stdexcept>
#include <stop_token>
#include <vector>

#include <forkjoin/blocked_range2d.hpp>
#include <forkjoin/blocked_range3d.hpp>

namespace {

static_assert(fj::splittable_range<fj::blocked_range<int>>);
static_assert(fj::splittable_range<fj::blocked_range<const double*>>);
static_assert(fj::splittable_range<fj::blocked_range<std::vector<int>::iterator>>);
static_assert(fj::splittable_range<fj::blocked_range2d<int>>);
static_assert(fj::splittable_range<fj::blocked_range3d<int, long, std::size_t>>);
static_assert(!fj::splittable_range<int>);
// Only random-access bounds: a list iterator cannot be cut in the middle cheaply.
static_assert(!fj::blocked_range_value<std::list<int>::iterator>);

class ranges_test : public fj_test::workers_test {
protected:
    fj::scheduler make_pool() const { return fj::scheduler(workers()); }
};

// A user's range in oneTBB's shape: the odd numbers in [lo, hi), split at an odd midpoint.
struct odd_numbers {
    long lo, hi; // lo odd
    std::size_t grain;
    odd_numbers(long l, long h, std::size_t g) : lo(l | 1), hi(h), grain(g) {}
    odd_numbers(odd_numbers& r, fj::split) : lo(0), hi(r.hi), grain(r.grain) {
        long mid = r.lo + (r.hi - r.lo) / 2;
        mid |= 1;
        lo = mid;
        r.hi = mid;
    }
    std::size_t count() const { return hi > lo ? static_cast<std::size_t>((hi - lo + 1) / 2) : 0; }
    bool empty() const { return count() == 0; }
    bool is_divisible() const { return count() > grain; }
};
static_assert(fj::splittable_range<odd_numbers>);

TEST(blocked_range, splits_into_two_halves_that_keep_the_grain) {
    fj::blocked_range<int> r(0, 10, 3);
    EXPECT_TRUE(r.is_divisible());
    fj::blocked_range<int> right(r, fj::split{});
    EXPECT_EQ(r.begin(), 0);
    EXPECT_EQ(r.end(), 5);
    EXPECT_EQ(right.begin(), 5);
    EXPECT_EQ(right.end(), 10);
    EXPECT_EQ(right.grain(), 3u);
    EXPECT_EQ(right.grainsize(), 3u);
    fj::blocked_range<int> small(0, 3, 3);
    EXPECT_FALSE(small.is_divisible());
    fj::blocked_range<int> no_grain(0, 2);
    EXPECT_EQ(no_grain.grainsize(), 1u); // oneTBB's default
    EXPECT_TRUE(no_grain.is_divisible());
}

TEST(blocked_range, over_pointers_and_iterators) {
    std::vector<int> v(10);
    fj::blocked_range<int*> p(v.data(), v.data() + v.size(), 2);
    EXPECT_EQ(p.size(), 10u);
    fj::blocked_range<int*> right(p, fj::split{});
    EXPECT_EQ(p.end(), v.data() + 5);
    EXPECT_EQ(right.begin(), v.data() + 5);
    fj::blocked_range<std::vector<int>::const_iterator> it(v.cbegin(), v.cend());
    EXPECT_EQ(it.size(), 10u);
    EXPECT_FALSE(it.empty());
    EXPECT_THROW((fj::blocked_range<int*>(v.data() + 3, v.data())), std::invalid_argument);
    try {
        fj::blocked_range<std::vector<int>::iterator> bad(v.end(), v.begin());
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "fj::blocked_range: reversed iterator range (end is 10 elements "
                               "before begin)");
    }
    EXPECT_THROW((fj::blocked_range<int*>(v.data(), v.data() + 1, 0)), std::invalid_argument);
}

TEST(blocked_range2d, splits_the_side_that_is_longer_for_its_grain) {
    fj::blocked_range2d<int> tall(0, 100, 0, 10);
    fj::blocked_range2d<int> right(tall, fj::split{});
    EXPECT_EQ(tall.rows().end(), 50);
    EXPECT_EQ(right.rows().begin(), 50);
    EXPECT_EQ(right.cols().size(), 10u);
    // Columns of grain 1 against rows of grain 20: 100 / 20 < 10 / 1, so the columns split.
    fj::blocked_range2d<int> coarse_rows(0, 100, 20, 0, 10, 1);
    fj::blocked_range2d<int> right2(coarse_rows, fj::split{});
    EXPECT_EQ(coarse_rows.rows().size(), 100u);
    EXPECT_EQ(coarse_rows.cols().end(), 5);
    EXPECT_EQ(right2.cols().begin(), 5);
    EXPECT_FALSE((fj::blocked_range2d<int>(0, 4, 4, 0, 8, 8).is_divisible()));
    EXPECT_TRUE((fj::blocked_range2d<int>(0, 0, 0, 8).empty()));
}

TEST(blocked_range2d, rejects_reversed_sides_and_zero_grains) {
    EXPECT_THROW((fj::blocked_range2d<int>(5, 4, 0, 8)), std::invalid_argument);
    EXPECT_THROW((fj::blocked_range2d<int>(0, 4, 0, 8, 9, 0)), std::invalid_argument);
    EXPECT_THROW((fj::blocked_range2d<int>(0, 4, 1, 0, 8, 0)), std::invalid_argument);
    EXPECT_THROW((fj::blocked_range3d<int>(0, 4, 0, 8, 3, 2)), std::invalid_argument);
    EXPECT_THROW((fj::blocked_range3d<int>(0, 4, 1, 0, 8, 1, 0, 2, 0)), std::invalid_argument);
}

TEST_P(ranges_test, parallel_for_over_pointers_and_iterators_visits_each_element_once) {
    fj::scheduler pool = make_pool();
    for (const std::size_t n : {0u, 1u, 7u, 1009u, 100'000u}) {
        std::vector<int> v(n, 0);
        // A body taking the range by non-const reference, as many oneTBB examples' lambdas do.
        fj::parallel_for(pool, fj::blocked_range<int*>{v.data(), v.data() + n},
                         [](fj::blocked_range<int*>& r) {
                             for (int* p = r.begin(); p != r.end(); ++p)
                                 ++*p;
                         });
        fj::parallel_for(pool,
                         fj::blocked_range<std::vector<int>::iterator>{v.begin(), v.end(), 64},
                         [](const fj::blocked_range<std::vector<int>::iterator>& r) {
                             EXPECT_LE(r.size(), 64u);
                             for (auto it = r.begin(); it != r.end(); ++it)
                                 ++*it;
                         });
        EXPECT_EQ(std::count(v.begin(), v.end(), 2), static_cast<long>(n));
        const long sum = fj::parallel_reduce(
            pool, fj::blocked_range<std::vector<int>::const_iterator>{v.cbegin(), v.cend()}, 0L,
            [](const auto& r, long acc) {
                for (auto it = r.begin(); it != r.end(); ++it)
                    acc += *it;
                return acc;
            },
            std::plus<>{});
        EXPECT_EQ(sum, 2 * static_cast<long>(n));
    }
}

TEST_P(ranges_test, parallel_for_over_2d_and_3d_ranges_visits_each_cell_once) {
    fj::scheduler pool = make_pool();
    const int h = 97, w = 131, d = 13;
    std::vector<std::atomic<int>> cells(static_cast<std::size_t>(h * w));
    fj::parallel_for(pool, fj::blocked_range2d<int>{0, h, 0, w},
                     [&](const fj::blocked_range2d<int>& r) {
                         for (int y = r.rows().begin(); y != r.rows().end(); ++y)
                             for (int x = r.cols().begin(); x != r.cols().end(); ++x)
                                 cells[static_cast<std::size_t>(y * w + x)].fetch_add(1);
                     });
    for (auto& c : cells)
        ASSERT_EQ(c.load(), 1);
    std::vector<std::atomic<int>> volume(static_cast<std::size_t>(d * h * w));
    fj::parallel_for(
        pool, fj::blocked_range3d<int>{0, d, 2, 0, h, 8, 0, w, 16},
        [&](fj::blocked_range3d<int>& r) {
            for (int z = r.pages().begin(); z != r.pages().end(); ++z)
                for (int y = r.rows().begin(); y != r.rows().end(); ++y)
                    for (int x = r.cols().begin(); x != r.cols().end(); ++x)
                        volume[static_cast<std::size_t>((z * h + y) * w + x)].fetch_add(1);
        });
    for (auto& c : volume)
        ASSERT_EQ(c.load(), 1);
}

TEST_P(ranges_test, the_functional_reduce_over_a_2d_range_is_deterministic_within_grains) {
    fj::scheduler pool = make_pool();
    const int h = 300, w = 200;
    std::atomic<bool> within_grains{true};
    const auto sum = [&] {
        return fj::parallel_reduce(
            pool, fj::blocked_range2d<int>{0, h, 16, 0, w, 32}, 0.0,
            [&](const fj::blocked_range2d<int>& r, double acc) {
                if (r.rows().size() > 16 || r.cols().size() > 32)
                    within_grains = false;
                for (int y = r.rows().begin(); y != r.rows().end(); ++y)
                    for (int x = r.cols().begin(); x != r.cols().end(); ++x)
                        acc += 1.0 / (1.0 + y * w + x);
                return acc;
            },
            std::plus<>{});
    };
    const double first = sum();
    double serial = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            serial += 1.0 / (1.0 + y * w + x);
    EXPECT_NEAR(first, serial, 1e-9);
    for (int k = 0; k < 5; ++k)
        EXPECT_EQ(sum(), first); // the same tree every time: bit-identical
    EXPECT_TRUE(within_grains.load());
}

TEST_P(ranges_test, a_users_own_range_works_with_every_range_form) {
    fj::scheduler pool = make_pool();
    const long hi = 200'001;
    std::atomic<long> visited{0};
    fj::parallel_for(pool, odd_numbers{1, hi, 100}, [&](const odd_numbers& r) {
        for (long k = r.lo; k < r.hi; k += 2)
            visited.fetch_add(k);
    });
    long serial = 0;
    for (long k = 1; k < hi; k += 2)
        serial += k;
    EXPECT_EQ(visited.load(), serial);
    const long reduced = fj::parallel_reduce(
        pool, odd_numbers{1, hi, 100}, 0L,
        [](const odd_numbers& r, long acc) {
            for (long k = r.lo; k < r.hi; k += 2)
                acc += k;
            return acc;
        },
        std::plus<>{});
    EXPECT_EQ(reduced, serial);
}

// oneTBB's imperative reduction body: counts how many bodies were made by splitting.
struct sum_body {
    const std::vector<long>* data;
    std::atomic<int>* splits;
    long sum = 0;
    sum_body(const std::vector<long>& d, std::atomic<int>& s) : data(&d), splits(&s) {}
    sum_body(sum_body& other, fj::split) : data(other.data), splits(other.splits) {
        splits->fetch_add(1);
    }
    void operator()(const fj::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i)
            sum += (*data)[i];
    }
    void join(sum_body& other) { sum += other.sum; }
};

TEST_P(ranges_test, the_body_style_reduce_matches_the_serial_sum) {
    fj::scheduler pool = make_pool();
    for (const std::size_t n : {0u, 1u, 2u, 101u, 1'000'003u}) {
        std::vector<long> data(n);
        std::iota(data.begin(), data.end(), 1L);
        std::atomic<int> splits{0};
        sum_body body(data, splits);
        fj_test::on_worker(pool, [&] {
            fj::parallel_reduce(pool, fj::blocked_range<std::size_t>{0, n}, body);
        });
        EXPECT_EQ(body.sum, static_cast<long>(n) * static_cast<long>(n + 1) / 2) << n;
        // One worker never runs a right half while its left half still runs: one body only.
        if (workers() == 1) {
            EXPECT_EQ(splits.load(), 0);
        }
    }
}

// A body whose first use builds state (a sieve window in oneTBB's primes example): reused across
// contiguous pieces, it builds it once per body, not once per piece.
struct stateful_body {
    std::atomic<int>* builds;
    bool built = false;
    long count = 0;
    explicit stateful_body(std::atomic<int>& b) : builds(&b) {}
    stateful_body(stateful_body& other, fj::split) : builds(other.builds) {}
    void operator()(const fj::blocked_range<int>& r) {
        if (!built) {
            builds->fetch_add(1);
            built = true;
        }
        count += static_cast<long>(r.size());
    }
    void join(stateful_body& other) { count += other.count; }
};

TEST_P(ranges_test, the_body_style_reduce_reuses_a_body_across_contiguous_pieces) {
    fj::scheduler pool = make_pool();
    std::atomic<int> builds{0};
    stateful_body body(builds);
    fj_test::on_worker(pool, [&] {
        fj::parallel_reduce(pool, fj::blocked_range<int>{0, 1 << 20, 256}, body);
    });
    EXPECT_EQ(body.count, 1 << 20);
    // 4096 pieces of 256; bodies are made only for halves stolen while their left half ran.
    EXPECT_LT(builds.load(), 4096);
    if (workers() == 1) {
        EXPECT_EQ(builds.load(), 1);
    }
}

TEST_P(ranges_test, the_first_piece_in_serial_order_that_threw_wins) {
    fj::scheduler pool = make_pool();
    struct at : std::runtime_error {
        explicit at(long k) : std::runtime_error("at"), where(k) {}
        long where;
    };
    for (int round = 0; round < 20; ++round) {
        try {
            fj::parallel_for(pool, odd_numbers{1, 100'001, 8}, [](const odd_numbers& r) {
                for (long k = r.lo; k < r.hi; k += 2)
                    if (k == 20'001 || k == 90'001)
                        throw at(k);
            });
            ADD_FAILURE();
        } catch (const at& e) {
            EXPECT_EQ(e.where, 20'001);
        }
    }
    std::atomic<int> splits{0};
    std::vector<long> data(100'000, 1);
    struct throwing_body : sum_body {
        using sum_body::sum_body;
        throwing_body(throwing_body& o, fj::split s) : sum_body(o, s) {}
        void operator()(const fj::blocked_range<std::size_t>& r) {
            if (r.begin() <= 777 && 777 < r.end())
                throw std::out_of_range("777");
            sum_body::operator()(r);
        }
        void join(throwing_body& other) { sum_body::join(other); }
    };
    throwing_body body(data, splits);
    EXPECT_THROW(fj::parallel_reduce(pool, fj::blocked_range<std::size_t>{0, data.size()}, body),
                 std::out_of_range);
}

TEST_P(ranges_test, range_forms_stop_on_request) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<long> pieces{0};
    EXPECT_THROW(fj::parallel_for(
                     pool, fj::blocked_range2d<int>{0, 1000, 0, 1000},
                     [&](const fj::blocked_range2d<int>&) {
                         if (pieces.fetch_add(1) == 3)
                             source.request_stop();
                     },
                     source.get_token()),
                 fj::operation_cancelled);
    EXPECT_LT(pieces.load(), 1000 * 1000);
    std::atomic<int> splits{0};
    std::vector<long> data(1000, 1);
    sum_body body(data, splits);
    EXPECT_THROW(fj::parallel_reduce(pool, fj::blocked_range<std::size_t>{0, data.size()}, body,
                                     source.get_token()),
                 fj::operation_cancelled);
    EXPECT_THROW(fj::parallel_reduce(
                     pool, odd_numbers{1, 1001, 4}, 0L,
                     [](const odd_numbers&, long acc) { return acc; }, std::plus<>{},
                     source.get_token()),
                 fj::operation_cancelled);
}

INSTANTIATE_TEST_SUITE_P(workers, ranges_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
