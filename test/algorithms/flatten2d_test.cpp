// fj::flatten2d: every element of every inner container exactly once, in outer then inner order;
// empty outer and empty inner containers (first, last, in a row) are skipped; size() adds up the
// inner sizes; elements change through a view of a non-const container, and a const view or a
// view of a const container gives const elements; the iterator is a forward iterator that std
// algorithms, range-for and fj::parallel_for_each accept; and an enumerable_thread_specific filled
// by a parallel_for flattens to exactly what the loop kept, at any worker count.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <forward_list>
#include <iterator>
#include <list>
#include <numeric>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using nested = std::vector<std::vector<int>>;
using ets_vectors = fj::enumerable_thread_specific<std::vector<int>>;

static_assert(std::forward_iterator<fj::flattened2d<nested>::iterator>);
static_assert(std::forward_iterator<fj::flattened2d<nested>::const_iterator>);
static_assert(std::forward_iterator<fj::flattened2d<ets_vectors>::iterator>);
static_assert(std::is_same_v<fj::flattened2d<nested>::reference, int&>);
static_assert(std::is_same_v<fj::flattened2d<nested>::const_reference, const int&>);
static_assert(std::is_same_v<fj::flattened2d<const nested>::reference, const int&>);
static_assert(std::is_convertible_v<fj::flattened2d<nested>::iterator,
                                    fj::flattened2d<nested>::const_iterator>);
static_assert(!std::is_convertible_v<fj::flattened2d<nested>::const_iterator,
                                     fj::flattened2d<nested>::iterator>);

template <class View>
std::vector<int> collect(const View& view) {
    std::vector<int> out;
    for (int x : view)
        out.push_back(x);
    return out;
}

TEST(flatten2d, an_empty_outer_container_is_an_empty_sequence) {
    nested none;
    auto flat = fj::flatten2d(none);
    EXPECT_EQ(flat.begin(), flat.end());
    EXPECT_TRUE(flat.empty());
    EXPECT_EQ(flat.size(), 0u);
    ets_vectors ets;
    EXPECT_EQ(fj::flatten2d(ets).size(), 0u);
    EXPECT_EQ(fj::flatten2d(ets).begin(), fj::flatten2d(ets).end());
}

TEST(flatten2d, only_empty_inner_containers_is_an_empty_sequence) {
    nested empties(5);
    auto flat = fj::flatten2d(empties);
    EXPECT_EQ(flat.begin(), flat.end());
    EXPECT_EQ(flat.size(), 0u);
    EXPECT_TRUE(collect(flat).empty());
}

TEST(flatten2d, empty_inner_containers_anywhere_are_skipped) {
    const nested parts{{}, {}, {1, 2}, {}, {3}, {}, {}, {4, 5, 6}, {}};
    const auto flat = fj::flatten2d(parts);
    EXPECT_EQ(collect(flat), (std::vector<int>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(flat.size(), 6u);
    EXPECT_EQ(static_cast<std::size_t>(std::distance(flat.begin(), flat.end())), flat.size());
    EXPECT_FALSE(flat.empty());
}

TEST(flatten2d, iterators_compare_and_post_increment_as_forward_iterators) {
    nested parts{{7}, {}, {8, 9}};
    auto flat = fj::flatten2d(parts);
    auto it = flat.begin();
    auto copy = it;
    EXPECT_EQ(*it++, 7);
    EXPECT_NE(it, copy);
    EXPECT_EQ(*copy, 7) << "a copy stays where it was (multi-pass)";
    EXPECT_EQ(*it, 8);
    fj::flattened2d<nested>::const_iterator cit = it; // iterator -> const_iterator
    EXPECT_EQ(cit, it);
    EXPECT_EQ(++it, std::next(cit));
    EXPECT_EQ(std::next(it), flat.end());
    EXPECT_EQ(fj::flattened2d<nested>::iterator{}, fj::flattened2d<nested>::iterator{});
}

TEST(flatten2d, elements_change_through_a_view_of_a_non_const_container) {
    nested parts{{1, 2}, {}, {3}};
    auto flat = fj::flatten2d(parts);
    for (int& x : flat)
        x *= 10;
    std::fill(std::next(flat.begin()), flat.end(), -1);
    EXPECT_EQ(parts, (nested{{10, -1}, {}, {-1}}));

    std::vector<std::vector<std::string>> words{{"a"}, {"bc"}};
    auto flat_words = fj::flatten2d(words);
    EXPECT_EQ(flat_words.begin()->size(), 1u) << "operator->";
    flat_words.begin()->append("x");
    EXPECT_EQ(words[0][0], "ax");
}

TEST(flatten2d, const_views_read_the_same_elements) {
    nested parts{{1}, {2, 3}};
    const auto const_view = fj::flatten2d(parts);
    static_assert(std::is_same_v<decltype(*const_view.begin()), const int&>);
    const nested& const_parts = parts;
    auto view_of_const = fj::flatten2d(const_parts);
    static_assert(std::is_same_v<decltype(*view_of_const.begin()), const int&>);
    EXPECT_EQ(collect(const_view), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(collect(view_of_const), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(std::vector<int>(const_view.cbegin(), const_view.cend()), collect(const_view));
}

TEST(flatten2d, a_sub_range_of_the_outer_container) {
    nested parts{{1}, {2, 3}, {}, {4}, {5}};
    auto middle = fj::flatten2d(std::next(parts.begin()), std::prev(parts.end()));
    EXPECT_EQ(collect(middle), (std::vector<int>{2, 3, 4}));
    EXPECT_EQ(middle.size(), 3u);
    for (int& x : middle)
        ++x;
    EXPECT_EQ(parts, (nested{{1}, {3, 4}, {}, {5}, {5}}));

    // oneTBB's spelling names the container too, and its view type is flattened2d<Container>.
    fj::flattened2d<nested> all = fj::flatten2d(parts, parts.begin(), parts.end());
    EXPECT_EQ(all.size(), 5u);
    fj::flattened2d<const nested> read_only = fj::flatten2d(parts, parts.cbegin(), parts.cend());
    EXPECT_EQ(collect(read_only), collect(all));
    EXPECT_TRUE(fj::flatten2d(parts, parts.begin(), parts.begin()).empty());
}

TEST(flatten2d, other_containers_inside_and_out) {
    std::list<std::set<int>> sets{{3, 1}, {}, {2}};
    EXPECT_EQ(collect(fj::flatten2d(sets)), (std::vector<int>{1, 3, 2}));
    std::forward_list<std::list<int>> lists{{}, {4, 5}, {}};
    auto flat = fj::flatten2d(lists);
    EXPECT_EQ(flat.size(), 2u);
    EXPECT_EQ(collect(flat), (std::vector<int>{4, 5}));
}

TEST(flatten2d, std_algorithms_take_the_view) {
    nested parts{{5, 1}, {}, {4}, {2, 3}};
    auto flat = fj::flatten2d(parts);
    EXPECT_EQ(std::accumulate(flat.begin(), flat.end(), 0), 15);
    EXPECT_EQ(std::count_if(flat.begin(), flat.end(), [](int x) { return x > 2; }), 3);
    EXPECT_EQ(*std::max_element(flat.begin(), flat.end()), 5);
    EXPECT_EQ(std::ranges::count(flat, 4), 1);
    EXPECT_NE(std::ranges::find(flat, 3), flat.end());
    std::vector<int> copied(flat.begin(), flat.end());
    std::sort(copied.begin(), copied.end());
    EXPECT_EQ(copied, (std::vector<int>{1, 2, 3, 4, 5}));
}

class flatten2d_test : public fj_test::workers_test {};

// The parts the threads kept, flattened, are exactly the kept indices: each once.
TEST_P(flatten2d_test, an_ets_filled_by_a_parallel_for_flattens_to_everything_kept) {
    fj::scheduler pool(workers());
    const int n = static_cast<int>(fj_test::scaled(100'000));
    ets_vectors kept;
    fj::parallel_for(pool, 0, n, [&](int i) {
        if (i % 3 == 0)
            kept.local().push_back(i);
    });
    const std::size_t expected = static_cast<std::size_t>((n + 2) / 3);
    auto flat = fj::flatten2d(kept);
    ASSERT_EQ(flat.size(), expected);
    std::vector<int> all(flat.begin(), flat.end());
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), expected);
    for (std::size_t k = 0; k < all.size(); ++k)
        ASSERT_EQ(all[k], static_cast<int>(3 * k));
    fj::flattened2d<const ets_vectors> read_only = fj::flatten2d(kept, kept.cbegin(), kept.cend());
    EXPECT_EQ(read_only.size(), expected) << "oneTBB's form, with const iterators";

    // Changed through the view, read back through a const view and the parts themselves.
    for (int& x : flat)
        x = -x;
    const ets_vectors& const_kept = kept;
    const auto read_back = fj::flatten2d(const_kept);
    EXPECT_TRUE(std::all_of(read_back.begin(), read_back.end(), [](int x) { return x <= 0; }));
    long parts_sum = 0;
    for (const std::vector<int>& part : kept)
        parts_sum = std::accumulate(part.begin(), part.end(), parts_sum);
    EXPECT_EQ(std::accumulate(read_back.begin(), read_back.end(), 0L), parts_sum);
}

// Forward iterators go to parallel_for_each's task-per-item form: every element visited once,
// and changed in place.
TEST_P(flatten2d_test, parallel_for_each_over_the_view) {
    fj::scheduler pool(workers());
    const int n = static_cast<int>(fj_test::scaled(20'000));
    ets_vectors parts;
    fj::parallel_for(pool, 0, n, [&](int i) { parts.local().push_back(i); });
    auto flat = fj::flatten2d(parts);
    std::atomic<long> sum{0};
    fj::parallel_for_each(pool, flat.begin(), flat.end(), [&](int& x) {
        sum.fetch_add(x, std::memory_order_relaxed);
        x += 1;
    });
    EXPECT_EQ(sum.load(), static_cast<long>(n) * (n - 1) / 2);
    const auto after = std::as_const(flat);
    EXPECT_EQ(std::accumulate(after.begin(), after.end(), 0L), static_cast<long>(n) * (n + 1) / 2);
}

INSTANTIATE_TEST_SUITE_P(workers, flatten2d_test, ::testing::Values(1, 2),
                         fj_test::worker_count_name);

} // namespace
