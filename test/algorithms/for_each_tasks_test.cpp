// parallel_for_each over input and forward iterators and with a feeder: every item (given or fed)
// is processed exactly once before the call returns, exceptions and stops end it cleanly, and an
// iterator that throws is reported after every started item has finished.
#include "support.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <iterator>
#include <list>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace {

class for_each_tasks_test : public fj_test::workers_test {
protected:
    fj::scheduler make_pool() const { return fj::scheduler(workers()); }
};

TEST_P(for_each_tasks_test, forward_iterators_visit_each_element_once_in_place) {
    fj::scheduler pool = make_pool();
    for (const std::size_t n : {0u, 1u, 13u, 1009u, 100'000u}) {
        std::list<int> items(n, 0);
        fj::parallel_for_each(pool, items.begin(), items.end(), [](int& x) { ++x; });
        EXPECT_EQ(std::count(items.begin(), items.end(), 1), static_cast<long>(n)) << n;
        std::forward_list<int> singly(n, 3);
        std::atomic<long> sum{0};
        fj::parallel_for_each(pool, singly.begin(), singly.end(), [&](const int& x) { sum += x; });
        EXPECT_EQ(sum.load(), 3 * static_cast<long>(n));
    }
}

TEST_P(for_each_tasks_test, input_iterators_get_a_copy_of_each_item) {
    fj::scheduler pool = make_pool();
    std::string text;
    long expected = 0;
    for (int i = 1; i <= 5000; ++i) {
        text += std::to_string(i) + " ";
        expected += i;
    }
    std::istringstream in(text);
    std::atomic<long> sum{0};
    std::atomic<int> calls{0};
    fj::parallel_for_each(pool, std::istream_iterator<int>(in), std::istream_iterator<int>(),
                          [&](int x) {
                              sum += x;
                              ++calls;
                          });
    EXPECT_EQ(sum.load(), expected);
    EXPECT_EQ(calls.load(), 5000);
}

// An item that counts its live copies: each queued task holds one.
struct counted_item {
    static inline std::atomic<long> alive{0};
    static inline std::atomic<long> most{0};
    int value = 0;
    explicit counted_item(int v = 0) : value(v) { born(); }
    counted_item(const counted_item& o) : value(o.value) { born(); }
    counted_item& operator=(const counted_item&) = default;
    ~counted_item() { alive.fetch_sub(1); }
    static void born() {
        const long now = alive.fetch_add(1) + 1;
        long seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
    }
};

// An input iterator over n counted items.
struct counted_input {
    using iterator_category = std::input_iterator_tag;
    using value_type = counted_item;
    using difference_type = std::ptrdiff_t;
    int i = 0;
    counted_item operator*() const { return counted_item(i); }
    counted_input& operator++() {
        ++i;
        return *this;
    }
    void operator++(int) { ++i; }
    bool operator==(const counted_input& o) const { return i == o.i; }
};

TEST_P(for_each_tasks_test, a_long_input_sequence_keeps_a_bounded_number_of_items_queued) {
    fj::scheduler pool = make_pool();
    counted_item::alive = 0;
    counted_item::most = 0;
    std::atomic<long> sum{0};
    constexpr int k_items = 50'000;
    fj::parallel_for_each(pool, counted_input{0}, counted_input{k_items},
                          [&](const counted_item& x) { sum += x.value; });
    EXPECT_EQ(sum.load(), long{k_items} * (k_items - 1) / 2);
    EXPECT_EQ(counted_item::alive.load(), 0);
    // The walk pauses at 64 items in flight per worker; a few copies are in transit besides.
    EXPECT_LE(counted_item::most.load(), static_cast<long>(64 * workers() + 8));
}

// oneTBB's parallel_preorder shape: each node adds its children through the feeder.
struct tree_node {
    int value;
    std::vector<std::unique_ptr<tree_node>> children;
};

std::unique_ptr<tree_node> make_tree(int depth, int& next) {
    auto n = std::make_unique<tree_node>();
    n->value = next++;
    if (depth > 0)
        for (int c = 0; c < 1 + (n->value % 3); ++c)
            n->children.push_back(make_tree(depth - 1, next));
    return n;
}

TEST_P(for_each_tasks_test, a_feeder_adds_items_that_are_processed_before_the_call_returns) {
    fj::scheduler pool = make_pool();
    int count = 0;
    std::vector<std::unique_ptr<tree_node>> roots;
    for (int r = 0; r < 3; ++r)
        roots.push_back(make_tree(9, count));
    std::vector<tree_node*> start;
    for (auto& r : roots)
        start.push_back(r.get());
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
    fj::parallel_for_each(pool, start.begin(), start.end(),
                          [&](tree_node* n, fj::feeder<tree_node*>& more) {
                              seen[static_cast<std::size_t>(n->value)].fetch_add(1);
                              for (auto& c : n->children)
                                  more.add(c.get());
                          });
    for (auto& s : seen)
        ASSERT_EQ(s.load(), 1);
}

TEST_P(for_each_tasks_test, a_feeder_works_from_an_input_sequence_too) {
    fj::scheduler pool = make_pool();
    std::istringstream in("5 3 0 7");
    std::atomic<int> calls{0};
    // Each item n feeds n - 1 down to 0: 6 + 4 + 1 + 8 items in all.
    fj::parallel_for_each(pool, std::istream_iterator<int>(in), std::istream_iterator<int>(),
                          [&](const int& n, fj::feeder<int>& more) {
                              ++calls;
                              if (n > 0)
                                  more.add(n - 1);
                          });
    EXPECT_EQ(calls.load(), 19);
}

TEST_P(for_each_tasks_test, an_exception_from_an_item_reaches_the_caller) {
    fj::scheduler pool = make_pool();
    std::list<int> items(10'000);
    std::iota(items.begin(), items.end(), 0);
    std::vector<std::atomic<int>> runs(items.size());
    EXPECT_THROW(fj::parallel_for_each(pool, items.begin(), items.end(),
                                       [&](int x) {
                                           runs[static_cast<std::size_t>(x)].fetch_add(1);
                                           if (x == 500)
                                               throw std::out_of_range("500");
                                       }),
                 std::out_of_range);
    for (auto& r : runs)
        ASSERT_LE(r.load(), 1);
    // The same from a fed item.
    std::vector<int> one{40};
    EXPECT_THROW(fj::parallel_for_each(pool, one.begin(), one.end(),
                                       [](int n, fj::feeder<int>& more) {
                                           if (n == 0)
                                               throw std::out_of_range("fed");
                                           more.add(n - 1);
                                       }),
                 std::out_of_range);
}

// An input iterator whose increment throws after `fail_at` items.
struct failing_iterator {
    using iterator_category = std::input_iterator_tag;
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    int position = 0;
    int fail_at = -1;
    int operator*() const { return position; }
    failing_iterator& operator++() {
        if (++position == fail_at)
            throw std::runtime_error("iterator");
        return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(const failing_iterator& o) const { return position == o.position; }
};
static_assert(std::input_iterator<failing_iterator>);

TEST_P(for_each_tasks_test, an_iterator_that_throws_is_reported_after_the_started_items_finish) {
    fj::scheduler pool = make_pool();
    std::atomic<int> running{0}, finished{0};
    failing_iterator first{0, 300}, last{1000, -1};
    EXPECT_THROW(fj::parallel_for_each(pool, first, last,
                                       [&](int) {
                                           ++running;
                                           ++finished;
                                           --running;
                                       }),
                 std::runtime_error);
    EXPECT_EQ(running.load(), 0); // nothing still running when the exception arrived
    EXPECT_LE(finished.load(), 300);
}

TEST_P(for_each_tasks_test, a_stop_request_ends_it_with_operation_cancelled) {
    fj::scheduler pool = make_pool();
    std::list<int> items(20'000);
    std::iota(items.begin(), items.end(), 0);
    std::vector<std::atomic<int>> runs(items.size());
    std::stop_source source;
    std::atomic<int> started{0};
    EXPECT_THROW(fj::parallel_for_each(
                     pool, items.begin(), items.end(),
                     [&](int x, fj::feeder<int>&) {
                         runs[static_cast<std::size_t>(x)].fetch_add(1);
                         if (started.fetch_add(1) == 100)
                             source.request_stop();
                     },
                     source.get_token()),
                 fj::operation_cancelled);
    int ran = 0;
    for (auto& r : runs) {
        ASSERT_LE(r.load(), 1);
        ran += r.load();
    }
    EXPECT_LT(ran, 20'000);
    source = std::stop_source{};
    source.request_stop();
    std::atomic<int> calls{0};
    EXPECT_THROW(fj::parallel_for_each(
                     pool, items.begin(), items.end(), [&](int) { ++calls; }, source.get_token()),
                 fj::operation_cancelled);
    EXPECT_EQ(calls.load(), 0);
}

TEST_P(for_each_tasks_test, called_from_inside_a_task_it_runs_on_that_pool) {
    fj::scheduler pool = make_pool();
    std::list<int> items(1000, 1);
    auto f = pool.submit([&] {
        std::atomic<int> sum{0};
        fj::parallel_for_each(items.begin(), items.end(), [&](int x) { sum += x; });
        return sum.load();
    });
    EXPECT_EQ(f.get(), 1000);
}

INSTANTIATE_TEST_SUITE_P(workers, for_each_tasks_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
