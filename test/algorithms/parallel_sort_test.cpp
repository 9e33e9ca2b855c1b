// fj::parallel_sort: the same result as std::sort for every size (across the cutoff) and every
// input shape that traps pivot choices (sorted, reversed, all equal, few distinct values, organ
// pipe, an adversary that makes any quicksort quadratic); custom comparators, move-only elements,
// the range forms; bad input rejected before anything moves; comparator exceptions reach the
// caller and leave the pool usable.
#include "support.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/parallel_sort.hpp>

namespace {

class parallel_sort_test : public fj_test::workers_test {};

// Around the cutoff (2048: sorted inline at or below it), primes, and 10^6. 300007 is above
// k_parallel_partition_min at every worker count tested, so the top partitions are split between
// workers (at 2 or more).
const std::vector<std::size_t> k_sizes = {
    0, 1, 2, 3, 7, 31, 2047, 2048, 2049, 4099, 10007, 100003, 300007, fj_test::scaled(1'000'000)};

enum class shape { random, sorted, reversed, all_equal, few_distinct, organ_pipe, sawtooth };
constexpr std::array k_shapes = {shape::random,    shape::sorted,       shape::reversed,
                                 shape::all_equal, shape::few_distinct, shape::organ_pipe,
                                 shape::sawtooth};

const char* name_of(shape s) {
    switch (s) {
    case shape::random:
        return "random";
    case shape::sorted:
        return "sorted";
    case shape::reversed:
        return "reversed";
    case shape::all_equal:
        return "all_equal";
    case shape::few_distinct:
        return "few_distinct";
    case shape::organ_pipe:
        return "organ_pipe";
    case shape::sawtooth:
        return "sawtooth";
    }
    return "?";
}

std::vector<std::int64_t> make_input(shape s, std::size_t n, std::uint64_t seed = 42) {
    std::vector<std::int64_t> v(n);
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = static_cast<std::int64_t>(i);
        const auto size = static_cast<std::int64_t>(n);
        switch (s) {
        case shape::random:
            v[i] = static_cast<std::int64_t>(rng() >> 1);
            break;
        case shape::sorted:
            v[i] = x;
            break;
        case shape::reversed:
            v[i] = size - x;
            break;
        case shape::all_equal:
            v[i] = 7;
            break;
        case shape::few_distinct:
            v[i] = static_cast<std::int64_t>(rng() % 3);
            break;
        case shape::organ_pipe:
            v[i] = std::min(x, size - x);
            break;
        case shape::sawtooth:
            v[i] = x % 1000;
            break;
        }
    }
    return v;
}

TEST_P(parallel_sort_test, matches_std_sort_for_every_size_and_shape) {
    fj::scheduler pool(workers());
    for (std::size_t n : k_sizes)
        for (shape s : k_shapes) {
            auto v = make_input(s, n);
            auto expected = v;
            std::sort(expected.begin(), expected.end());
            fj::parallel_sort(pool, v.begin(), v.end());
            // Equal to std::sort's output: sorted, and the same multiset of values.
            ASSERT_EQ(v, expected) << "n=" << n << " shape=" << name_of(s);
        }
}

TEST_P(parallel_sort_test, custom_comparators) {
    fj::scheduler pool(workers());
    const std::size_t n = 100003;
    auto v = make_input(shape::random, n);

    auto by_greater = v;
    fj::parallel_sort(pool, by_greater.begin(), by_greater.end(), std::greater<>{});
    EXPECT_TRUE(std::is_sorted(by_greater.begin(), by_greater.end(), std::greater<>{}));

    // A function pointer, and a key that ties often (not stable: compare the keys only).
    bool (*by_last_digit)(const std::int64_t&, const std::int64_t&) =
        [](const std::int64_t& a, const std::int64_t& b) { return a % 10 < b % 10; };
    auto by_digit = v;
    fj::parallel_sort(pool, by_digit.begin(), by_digit.end(), by_last_digit);
    EXPECT_TRUE(std::is_sorted(by_digit.begin(), by_digit.end(), by_last_digit));
    std::sort(by_digit.begin(), by_digit.end());
    auto expected = v;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(by_digit, expected) << "not a permutation of the input";

    // Strings, compared by a stateful comparator that is called by reference from every worker.
    std::vector<std::string> words;
    for (std::size_t i = 0; i < 20'000; ++i)
        words.push_back(std::to_string(static_cast<std::uint64_t>(v[i]) % 100'000));
    auto expected_words = words;
    std::sort(expected_words.begin(), expected_words.end());
    struct counting_less {
        std::atomic<std::uint64_t> calls{0};
        bool operator()(const std::string& a, const std::string& b) {
            calls.fetch_add(1, std::memory_order_relaxed);
            return a < b;
        }
    } counting;
    fj::parallel_sort(pool, words, counting);
    EXPECT_EQ(words, expected_words);
    EXPECT_GT(counting.calls.load(), words.size()); // the caller's object, not a copy
}

TEST_P(parallel_sort_test, move_only_elements) {
    fj::scheduler pool(workers());
    const std::size_t n = 50'000;
    std::vector<std::unique_ptr<std::int64_t>> v;
    std::int64_t sum = 0;
    for (std::int64_t x : make_input(shape::few_distinct, n, 7)) {
        v.push_back(
            std::make_unique<std::int64_t>(x * 1'000'000 + static_cast<std::int64_t>(v.size())));
        sum += *v.back();
    }
    fj::parallel_sort(pool, v, [](const auto& a, const auto& b) { return *a < *b; });
    std::int64_t after = 0;
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NE(v[i], nullptr);
        after += *v[i];
        if (i > 0) {
            ASSERT_LT(*v[i - 1], *v[i]);
        }
    }
    EXPECT_EQ(after, sum);
}

TEST_P(parallel_sort_test, range_forms_and_the_current_scheduler) {
    fj::scheduler pool(workers());
    auto input = make_input(shape::random, 30'011);
    auto expected = input;
    std::sort(expected.begin(), expected.end());

    std::deque<std::int64_t> d(input.begin(), input.end()); // random access, not contiguous
    fj::parallel_sort(pool, d);
    EXPECT_TRUE(std::equal(d.begin(), d.end(), expected.begin(), expected.end()));

    auto v = input;
    fj::parallel_sort(pool, std::span<std::int64_t>(v)); // a view passed by value
    EXPECT_EQ(v, expected);

    // Inside a task of the pool, the forms without a scheduler use that pool.
    v = input;
    pool.execute([&] {
        fj::parallel_sort(v);
        EXPECT_TRUE(pool.on_worker_thread());
    });
    EXPECT_EQ(v, expected);

    // Nested in a parallel loop: many sorts at once, each splitting where workers are idle.
    std::vector<std::vector<std::int64_t>> many(16, input);
    fj::parallel_for(pool, std::size_t{0}, many.size(), [&](std::size_t i) {
        fj::parallel_sort(many[i].begin(), many[i].end(), std::less<>{});
    });
    for (const auto& m : many)
        EXPECT_EQ(m, expected);

    std::int64_t raw[] = {5, 3, 9, 1};
    fj::parallel_sort(raw);
    EXPECT_TRUE(std::is_sorted(std::begin(raw), std::end(raw)));
}

// McIlroy's adversary ("A killer adversary for quicksort", 1999): it decides the values of the
// elements while the sort compares them, so that every pivot the sort picks is among the smallest
// elements left. Any quicksort is quadratic against it; the depth limit must hand the range to
// std::sort instead. Single-threaded by construction: it runs on one worker.
class adversary {
public:
    explicit adversary(std::size_t n) : m_value(n, static_cast<std::int64_t>(n)), m_gas(n) {}

    bool less(std::size_t x, std::size_t y) {
        ++m_comparisons;
        if (gas(x) && gas(y))
            freeze(x == m_candidate ? x : y);
        if (gas(x))
            m_candidate = x;
        else if (gas(y))
            m_candidate = y;
        return m_value[x] < m_value[y];
    }
    std::int64_t value(std::size_t x) const { return m_value[x]; }
    std::uint64_t comparisons() const { return m_comparisons; }

private:
    bool gas(std::size_t x) const { return m_value[x] == static_cast<std::int64_t>(m_gas); }
    void freeze(std::size_t x) { m_value[x] = m_solid++; }

    std::vector<std::int64_t> m_value;
    std::size_t m_gas;
    std::int64_t m_solid = 0;
    std::size_t m_candidate = 0;
    std::uint64_t m_comparisons = 0;
};

TEST(parallel_sort_depth_limit, an_adversary_cannot_make_it_quadratic) {
    fj::scheduler pool(1);
    const std::size_t n = 100'000;
    adversary adv(n);
    std::vector<std::size_t> items(n);
    std::iota(items.begin(), items.end(), std::size_t{0});
    fj::parallel_sort(pool, items, [&](std::size_t x, std::size_t y) { return adv.less(x, y); });
    for (std::size_t i = 1; i < n; ++i)
        ASSERT_LE(adv.value(items[i - 1]), adv.value(items[i])) << "at " << i;
    // n log2 n is 1.7 million; a quadratic run would need billions. std::sort takes about
    // 2 n log2 n against the same adversary.
    const double n_log_n = static_cast<double>(n) * std::log2(static_cast<double>(n));
    EXPECT_LT(static_cast<double>(adv.comparisons()), 8 * n_log_n);
}

TEST_P(parallel_sort_test, comparisons_stay_n_log_n_on_pivot_traps) {
    fj::scheduler pool(workers());
    const std::size_t n = 100'003;
    const double n_log_n = static_cast<double>(n) * std::log2(static_cast<double>(n));
    for (shape s : k_shapes) {
        auto v = make_input(s, n);
        std::atomic<std::uint64_t> calls{0};
        fj::parallel_sort(pool, v, [&](std::int64_t a, std::int64_t b) {
            calls.fetch_add(1, std::memory_order_relaxed);
            return a < b;
        });
        EXPECT_TRUE(std::is_sorted(v.begin(), v.end())) << name_of(s);
        EXPECT_LT(static_cast<double>(calls.load()), 4 * n_log_n) << name_of(s);
    }
}

struct comparator_failure : std::runtime_error {
    comparator_failure() : std::runtime_error("comparator failed") {}
};

TEST_P(parallel_sort_test, a_comparator_exception_reaches_the_caller) {
    fj::scheduler pool(workers());
    const std::size_t n = 200'003;
    auto input = make_input(shape::random, n);
    auto expected = input;
    std::sort(expected.begin(), expected.end());
    // Throw at the first call, during the top partition, inside a leaf's std::sort, late.
    for (std::uint64_t throw_at : {1u, 100u, 500'000u, 2'000'000u}) {
        auto v = input;
        std::atomic<std::uint64_t> calls{0};
        auto comp = [&](std::int64_t a, std::int64_t b) {
            if (calls.fetch_add(1, std::memory_order_relaxed) + 1 == throw_at)
                throw comparator_failure();
            return a < b;
        };
        EXPECT_THROW(fj::parallel_sort(pool, v.begin(), v.end(), comp), comparator_failure)
            << "throw at call " << throw_at;
        EXPECT_EQ(v.size(), n); // valid but unspecified contents
        // The pool is not disturbed: the same data sorts.
        fj::parallel_sort(pool, v.begin(), v.end());
        EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    }
    auto v = input;
    fj::parallel_sort(pool, v);
    EXPECT_EQ(v, expected);
}

TEST(parallel_sort_bad_input, is_rejected_before_anything_moves) {
    std::vector<int> v = {3, 2, 1, 0};
    const auto original = v;
    try {
        fj::parallel_sort(v.end(), v.begin());
        ADD_FAILURE() << "a reversed range was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(
            e.what(),
            "fj::parallel_sort: reversed iterator range (last is 4 elements before first)");
    }
    bool (*null_comp)(const int&, const int&) = nullptr;
    EXPECT_THROW(fj::parallel_sort(v.begin(), v.end(), null_comp), std::invalid_argument);
    EXPECT_THROW(fj::parallel_sort(v, null_comp), std::invalid_argument);
    EXPECT_THROW(fj::parallel_sort(v.begin(), v.begin(), null_comp), std::invalid_argument);
    EXPECT_THROW(fj::parallel_sort(v, std::function<bool(int, int)>{}), std::invalid_argument);
    std::vector<int> big(10'000, 1);
    EXPECT_THROW(fj::parallel_sort(big, null_comp), std::invalid_argument);
    EXPECT_EQ(v, original);
}

TEST(parallel_sort_bad_input, a_shut_down_scheduler_sorts_nothing_large) {
    fj::scheduler pool(2);
    pool.shutdown();
    // At most the cutoff: std::sort on the calling thread, no task, so no error.
    auto small = make_input(shape::reversed, 2048);
    fj::parallel_sort(pool, small);
    EXPECT_TRUE(std::is_sorted(small.begin(), small.end()));
    // Above it the sort needs the pool: refused before anything moves.
    auto large = make_input(shape::reversed, 2049);
    const auto original = large;
    EXPECT_THROW(fj::parallel_sort(pool, large), fj::scheduler_closed);
    EXPECT_EQ(large, original);
}

// What the constraints accept and refuse, checked at compile time.
struct no_less {};
template <class R>
concept can_sort = requires(R& r) {
    fj::parallel_sort(r);
};
static_assert(can_sort<std::vector<int>> && can_sort<std::deque<std::string>>);
static_assert(!can_sort<std::vector<no_less>>); // no operator<

INSTANTIATE_TEST_SUITE_P(workers, parallel_sort_test, ::testing::Values(1, 2, 3, 4),
                         fj_test::worker_count_name);

} // namespace
