// fj::parallel_for / parallel_for_each: every index exactly once for every shape of range, grain
// and worker count; the index type; bad input; exceptions (lowest index wins, nothing outlives the
// call); nesting; load balancing by stealing.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using fj_test::scaled;

class parallel_for_test : public fj_test::workers_test {};

// Range sizes around the split points: empty, tiny, primes, powers of two and their neighbours.
const std::vector<std::size_t> k_sizes = {0,  1,  2,   3,    7,    8,    31,   63,
                                          64, 65, 127, 1000, 1023, 1024, 1025, 4099};
// 0 = the adaptive default.
const std::vector<std::size_t> k_grains = {0, 1, 2, 7};

// Counts visits per index; reports any index visited other than exactly once.
class visit_counts {
public:
    explicit visit_counts(std::size_t n) : m_counts(n) {}
    void visit(std::size_t i) { m_counts.at(i).fetch_add(1, std::memory_order_relaxed); }
    void expect_each_once(const std::string& what) const {
        for (std::size_t i = 0; i < m_counts.size(); ++i)
            if (m_counts[i].load() != 1) {
                ADD_FAILURE() << what << ": index " << i << " visited " << m_counts[i].load()
                              << " times";
                return;
            }
    }
    int count(std::size_t i) const { return m_counts.at(i).load(); }

private:
    std::vector<std::atomic<int>> m_counts;
};

TEST_P(parallel_for_test, visits_every_index_exactly_once) {
    fj::scheduler pool(workers());
    for (std::size_t n : k_sizes)
        for (std::size_t g : k_grains) {
            visit_counts counts(n);
            auto body = [&](std::size_t i) { counts.visit(i); };
            if (g == 0)
                fj::parallel_for(pool, std::size_t{0}, n, body);
            else
                fj::parallel_for(pool, std::size_t{0}, n, body, fj::grain{g});
            counts.expect_each_once("n=" + std::to_string(n) + " grain=" + std::to_string(g));
        }
}

TEST_P(parallel_for_test, blocked_range_covers_the_range_with_chunks_within_the_grain) {
    fj::scheduler pool(workers());
    for (std::size_t n : k_sizes)
        for (std::size_t g : k_grains) {
            visit_counts counts(n);
            std::atomic<bool> oversized{false}, empty_chunk{false};
            auto body = [&](fj::blocked_range<std::size_t> r) {
                if (r.empty())
                    empty_chunk = true;
                if (g != 0 && r.size() > g)
                    oversized = true;
                for (std::size_t i = r.begin(); i != r.end(); ++i)
                    counts.visit(i);
            };
            if (g == 0)
                fj::parallel_for(pool, fj::blocked_range<std::size_t>{0, n}, body);
            else
                fj::parallel_for(pool, fj::blocked_range<std::size_t>{0, n, g}, body);
            const std::string what = "n=" + std::to_string(n) + " grain=" + std::to_string(g);
            counts.expect_each_once(what);
            EXPECT_FALSE(oversized.load()) << what;
            EXPECT_FALSE(empty_chunk.load()) << what;
        }
}

TEST_P(parallel_for_test, strided_ranges_visit_first_plus_multiples_of_step_below_last) {
    fj::scheduler pool(workers());
    for (int step : {1, 2, 3, 7, 100, 1000})
        for (int last : {3, 4, 5, 99, 100, 101, 997}) {
            std::vector<std::atomic<int>> hits(static_cast<std::size_t>(last) + 10);
            fj::parallel_for(pool, 3, last, step, [&](int i) { hits.at(i).fetch_add(1); });
            for (int i = 0; i < static_cast<int>(hits.size()); ++i) {
                const int expected = (i >= 3 && i < last && (i - 3) % step == 0) ? 1 : 0;
                ASSERT_EQ(hits[i].load(), expected)
                    << "step " << step << " last " << last << " index " << i;
            }
        }
}

TEST_P(parallel_for_test, signed_and_extreme_ranges) {
    fj::scheduler pool(workers());
    std::atomic<long> sum{0};
    fj::parallel_for(pool, -500, 500, [&](int i) { sum += i; });
    EXPECT_EQ(sum.load(), -500);

    // The whole range near the top of a narrow type: no overflow in the splitting arithmetic.
    std::atomic<int> visits{0};
    fj::parallel_for(pool, std::int8_t{-128}, std::int8_t{127}, [&](std::int8_t) { ++visits; });
    EXPECT_EQ(visits.load(), 255);
    visits = 0;
    fj::parallel_for(pool, std::uint64_t{UINT64_MAX - 100}, UINT64_MAX,
                     [&](std::uint64_t i) { visits += (i >= UINT64_MAX - 100) ? 1 : 1000; });
    EXPECT_EQ(visits.load(), 100);
}

TEST(parallel_for_index_type, is_the_common_type_of_first_and_last) {
    std::vector<int> v(100);
    fj::parallel_for(0, v.size(), [&](auto i) {
        static_assert(std::is_same_v<decltype(i), std::size_t>);
        v[i] = static_cast<int>(i);
    });
    EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0), 4950);
    fj::parallel_for(short{0}, 10L,
                     [](auto i) { static_assert(std::is_same_v<decltype(i), long>); });
}

TEST_P(parallel_for_test, for_each_visits_every_element_of_random_access_containers) {
    fj::scheduler pool(workers());
    std::vector<int> v(10007);
    std::iota(v.begin(), v.end(), 0);
    fj::parallel_for_each(pool, v.begin(), v.end(), [](int& x) { x *= 2; });
    for (std::size_t i = 0; i < v.size(); ++i)
        ASSERT_EQ(v[i], 2 * static_cast<int>(i));

    std::deque<long> d(3001, 1);
    fj::parallel_for_each(
        pool, d.begin(), d.end(), [](long& x) { x += 1; }, fj::grain{16});
    EXPECT_TRUE(std::all_of(d.begin(), d.end(), [](long x) { return x == 2; }));

    int raw[5] = {1, 2, 3, 4, 5};
    fj::parallel_for_each(pool, raw, raw + 5, [](int& x) { x = -x; });
    EXPECT_EQ(raw[4], -5);
    fj::parallel_for_each(pool, raw, raw, [](int&) { ADD_FAILURE() << "empty range called"; });
}

TEST(parallel_for_bad_input, is_rejected_with_invalid_argument_and_nothing_runs) {
    std::atomic<int> calls{0};
    auto body = [&](int) { ++calls; };
    EXPECT_THROW(fj::parallel_for(10, 5, body), std::invalid_argument);
    EXPECT_THROW(fj::parallel_for(0, 10, 0, body), std::invalid_argument);
    EXPECT_THROW(fj::parallel_for(0, 10, -1, body), std::invalid_argument);
    EXPECT_THROW(fj::parallel_for(0, 10, body, fj::grain{0}), std::invalid_argument);
    EXPECT_THROW((fj::blocked_range<int>{5, 4}), std::invalid_argument);
    EXPECT_THROW((fj::blocked_range<int>{0, 4, 0}), std::invalid_argument);
    // -1 cannot be a std::size_t index: reported, not wrapped to 2^64 - 1.
    EXPECT_THROW(fj::parallel_for(-1, std::size_t{10}, [&](std::size_t) { ++calls; }),
                 std::invalid_argument);
    std::vector<int> v(4);
    EXPECT_THROW(fj::parallel_for_each(v.end(), v.begin(), [](int&) {}), std::invalid_argument);
    void (*null_body)(int) = nullptr;
    EXPECT_THROW(fj::parallel_for(0, 10, null_body), std::invalid_argument);
    EXPECT_THROW(fj::parallel_for(0, 10, std::function<void(int)>{}), std::invalid_argument);
    EXPECT_EQ(calls.load(), 0);
    try {
        fj::parallel_for(10, 5, body);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("reversed range"), std::string::npos) << e.what();
    }
}

struct index_error : std::runtime_error {
    explicit index_error(std::size_t i) : std::runtime_error("index"), index(i) {}
    std::size_t index;
};

TEST_P(parallel_for_test, the_lowest_throwing_index_wins_and_every_lower_index_ran) {
    fj::scheduler pool(workers());
    const std::size_t n = 5000;
    for (const std::set<std::size_t>& throwing :
         std::vector<std::set<std::size_t>>{{0}, {n - 1}, {2500}, {17, 18, 4000}, {600, 1, 3000}}) {
        for (std::size_t g : k_grains) {
            visit_counts counts(n);
            auto body = [&](std::size_t i) {
                counts.visit(i);
                if (throwing.count(i))
                    throw index_error(i);
            };
            std::size_t caught = SIZE_MAX;
            try {
                if (g == 0)
                    fj::parallel_for(pool, std::size_t{0}, n, body);
                else
                    fj::parallel_for(pool, std::size_t{0}, n, body, fj::grain{g});
            } catch (const index_error& e) {
                caught = e.index;
            }
            const std::size_t lowest = *throwing.begin();
            ASSERT_EQ(caught, lowest) << "grain " << g;
            for (std::size_t i = 0; i <= lowest; ++i)
                ASSERT_EQ(counts.count(i), 1) << "index " << i << " below the failure, grain " << g;
        }
    }
}

TEST_P(parallel_for_test, no_body_runs_after_the_call_returns_even_when_one_throws) {
    fj::scheduler pool(workers());
    for (int round = 0; round < 20; ++round) {
        auto alive = std::make_unique<std::atomic<int>>(0);
        std::atomic<int>* running = alive.get();
        try {
            fj::parallel_for(pool, 0, 2000, [running](int i) {
                running->fetch_add(1);
                if (i == 1000)
                    throw std::runtime_error("boom");
                for (int spin = 0; spin < 200; ++spin)
                    asm volatile(""); // a little work, so bodies overlap
                running->fetch_sub(1);
            });
        } catch (const std::runtime_error&) {
        }
        // The thrower never decremented; every other started body did before the call returned.
        EXPECT_EQ(running->load(), 1);
    }
}

TEST_P(parallel_for_test, exceptions_of_any_type_reach_the_caller) {
    fj::scheduler pool(workers());
    EXPECT_THROW(fj::parallel_for(pool, 0, 100,
                                  [](int i) {
                                      if (i == 42)
                                          throw 42;
                                  }),
                 int);
    EXPECT_THROW(fj::parallel_for(pool, fj::blocked_range<int>{0, 100, 3},
                                  [](fj::blocked_range<int>) { throw std::bad_alloc(); }),
                 std::bad_alloc);
}

TEST_P(parallel_for_test, nested_loops_1000_by_1000) {
    fj::scheduler pool(workers());
    const std::size_t n = fj_test::k_sanitizer_slowdown > 1 ? 300 : 1000;
    std::vector<std::atomic<std::uint32_t>> row_sums(n);
    fj::parallel_for(pool, std::size_t{0}, n, [&](std::size_t i) {
        fj::parallel_for(std::size_t{0}, n, [&](std::size_t j) {
            row_sums[i].fetch_add(static_cast<std::uint32_t>(j), std::memory_order_relaxed);
        });
    });
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(row_sums[i].load(), n * (n - 1) / 2) << "row " << i;
}

TEST_P(parallel_for_test, three_levels_deep_and_inside_forked_tasks) {
    fj::scheduler pool(workers());
    std::atomic<long> visits{0};
    auto root = pool.submit([&] {
        std::vector<fj::future<void>> children;
        for (int t = 0; t < 4; ++t)
            children.push_back(fj::fork([&] {
                fj::parallel_for(0, 20, [&](int) {
                    fj::parallel_for(0, 20, [&](int) {
                        fj::parallel_for(0, 20, [&](int) { visits.fetch_add(1); });
                    });
                });
            }));
        for (auto& c : children)
            c.get();
    });
    ASSERT_TRUE(fj_test::get_void(root));
    EXPECT_EQ(visits.load(), 4 * 20 * 20 * 20);
}

// A body that blocks index 0 until another worker has run some other index: only possible if the
// loop exposed work for stealing while index 0 was running (no pre-chopping needed to pass, but a
// loop that ran everything on one worker would hang here until the deadline).
TEST_P(parallel_for_test, other_workers_steal_while_one_body_is_long) {
    if (workers() < 2)
        GTEST_SKIP() << "needs a thief";
    fj::scheduler pool(workers());
    for (std::size_t g : k_grains) {
        std::atomic<bool> helped{false};
        auto body = [&](int i) {
            if (i == 0)
                EXPECT_TRUE(fj_test::spin_until([&] { return helped.load(); })) << "grain " << g;
            else
                helped = true;
        };
        if (g == 0)
            fj::parallel_for(pool, 0, 1000, body);
        else
            fj::parallel_for(pool, 0, 1000, body, fj::grain{g});
    }
}

TEST_P(parallel_for_test, runs_on_the_given_scheduler_from_outside_and_from_another_pool) {
    fj::scheduler pool(workers());
    fj::scheduler other(2);
    std::atomic<int> wrong_pool{0}, visits{0};
    auto check = [&](int) {
        if (&fj::current_scheduler() != &pool)
            ++wrong_pool;
        ++visits;
    };
    fj::parallel_for(pool, 0, 500, check);
    auto from_other = other.submit([&] { fj::parallel_for(pool, 0, 500, check); });
    ASSERT_TRUE(fj_test::get_void(from_other));
    EXPECT_EQ(visits.load(), 1000);
    EXPECT_EQ(wrong_pool.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(workers, parallel_for_test, ::testing::Values(1, 2, 3, 7),
                         fj_test::worker_count_name);

} // namespace
