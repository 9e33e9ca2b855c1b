// The body-style fj::parallel_scan(range, body) (oneTBB's): the serial prefix sum for every size
// and grain and worker count; every element final-scanned exactly once; one worker final-scans
// with the user's body alone (no pre-scan, no split); a non-commutative state (reverse_join puts
// the left state first); a 2D scan and a user's own range; exceptions from the pre-scan, the final
// scan, reverse_join and the splitting constructor; stop requests; a stress loop with random
// grains.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <stop_token>
#include <vector>

namespace {

using range1d = fj::blocked_range<std::size_t>;

// What the bodies did, summed over every body of one call.
struct scan_counts {
    std::atomic<long> pre_attempts{0}; // stalling_sum's, before it may throw
    std::atomic<long> pre_calls{0};
    std::atomic<long> final_calls{0};
    std::atomic<long> pre_elements{0};
    std::atomic<long> final_elements{0};
    std::atomic<long> splits{0};
    std::atomic<long> reverse_joins{0};
    std::atomic<long> assigns{0};
};

// oneTBB's running-sum body: out[i] = in[0] + ... + in[i].
struct prefix_sum {
    const std::int64_t* in;
    std::int64_t* out;
    scan_counts* counts;
    std::int64_t sum = 0;

    prefix_sum(const std::int64_t* i, std::int64_t* o, scan_counts& c)
        : in(i), out(o), counts(&c) {}
    prefix_sum(prefix_sum& b, fj::split) : in(b.in), out(b.out), counts(b.counts) {
        counts->splits.fetch_add(1, std::memory_order_relaxed);
    }
    template <class Tag>
    void operator()(const range1d& r, Tag) {
        std::int64_t s = sum;
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
            s += in[i];
            if (Tag::is_final_scan())
                out[i] = s;
        }
        sum = s;
        const auto n = static_cast<long>(r.size());
        if (Tag::is_final_scan()) {
            counts->final_calls.fetch_add(1, std::memory_order_relaxed);
            counts->final_elements.fetch_add(n, std::memory_order_relaxed);
        } else {
            counts->pre_calls.fetch_add(1, std::memory_order_relaxed);
            counts->pre_elements.fetch_add(n, std::memory_order_relaxed);
        }
    }
    void reverse_join(prefix_sum& left) {
        counts->reverse_joins.fetch_add(1, std::memory_order_relaxed);
        sum = left.sum + sum;
    }
    void assign(prefix_sum& b) {
        counts->assigns.fetch_add(1, std::memory_order_relaxed);
        sum = b.sum;
    }
};

std::vector<std::int64_t> input(std::size_t n) {
    std::vector<std::int64_t> v(n);
    fj_test::rng r(n + 3);
    for (auto& x : v)
        x = static_cast<std::int64_t>(r.below(1000)) - 500;
    return v;
}

std::vector<std::int64_t> serial_scan(const std::vector<std::int64_t>& in) {
    std::vector<std::int64_t> out(in.size());
    std::inclusive_scan(in.begin(), in.end(), out.begin());
    return out;
}

range1d with_grain(std::size_t n, std::size_t grain) {
    return grain == 0 ? range1d(0, n) : range1d(0, n, grain);
}

class body_scan_test : public fj_test::workers_test {};

TEST_P(body_scan_test, matches_the_serial_prefix_sum) {
    fj::scheduler pool(workers());
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7},
          std::size_t{13}, std::size_t{1021}, std::size_t{4099}, std::size_t{100003},
          fj_test::scaled(1'000'000)}) {
        const auto in = input(n);
        const auto expected = serial_scan(in);
        for (const std::size_t grain : {0u, 1u, 7u, 1000u}) {
            scan_counts counts;
            std::vector<std::int64_t> out(n, -7);
            prefix_sum body(in.data(), out.data(), counts);
            fj::parallel_scan(pool, with_grain(n, grain), body);
            EXPECT_EQ(out, expected) << "n=" << n << " grain=" << grain;
            EXPECT_EQ(body.sum, n == 0 ? 0 : expected.back()) << "n=" << n << " grain=" << grain;
            EXPECT_EQ(counts.final_elements.load(), static_cast<long>(n))
                << "every element final-scanned exactly once; n=" << n << " grain=" << grain;
        }
    }
}

TEST_P(body_scan_test, the_default_scheduler_and_a_never_stopped_token_give_the_full_result) {
    fj::scheduler pool(workers());
    const std::size_t n = 50'000;
    const auto in = input(n);
    const auto expected = serial_scan(in);
    scan_counts counts;
    std::vector<std::int64_t> out(n, -7);
    prefix_sum body(in.data(), out.data(), counts);
    std::stop_source never;
    pool.execute([&] { fj::parallel_scan(range1d(0, n, 100), body, never.get_token()); });
    EXPECT_EQ(out, expected);
    EXPECT_EQ(body.sum, expected.back());
    std::vector<std::int64_t> out2(n, -7);
    prefix_sum body2(in.data(), out2.data(), counts);
    fj::parallel_scan(pool, range1d(0, n), body2, std::stop_token{});
    EXPECT_EQ(out2, expected);
}

TEST(body_scan_one_worker, final_scans_with_the_users_body_alone) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler pool(1);
    for (const std::size_t n :
         {std::size_t{1}, std::size_t{2}, std::size_t{1000}, std::size_t{100'003}}) {
        const auto in = input(n);
        const auto expected = serial_scan(in);
        for (const std::size_t grain : {0u, 1u, 7u, 1000u}) {
            scan_counts counts;
            std::vector<std::int64_t> out(n, -7);
            prefix_sum body(in.data(), out.data(), counts);
            // From a task on the worker: from this thread the scan would run on it as a caller,
            // which the worker may help after its backstop (docs/design/callers.md). wait()
            // first: get() alone could run the task here (take-over).
            auto on_worker =
                pool.submit([&] { fj::parallel_scan(pool, with_grain(n, grain), body); });
            on_worker.wait();
            on_worker.get();
            EXPECT_EQ(out, expected);
            EXPECT_EQ(body.sum, expected.back());
            EXPECT_EQ(counts.pre_calls.load(), 0) << "n=" << n << " grain=" << grain;
            EXPECT_EQ(counts.pre_elements.load(), 0);
            EXPECT_EQ(counts.splits.load(), 0);
            EXPECT_EQ(counts.reverse_joins.load(), 0);
            EXPECT_EQ(counts.assigns.load(), 0);
            EXPECT_EQ(counts.final_elements.load(), static_cast<long>(n));
        }
    }
}

// Column sums down a grid: out[y][x] = in[0][x] + ... + in[y][x]. The state is one running sum
// per column; any split of the rectangle keeps, for each column, the rows above a piece before it.
struct column_scan {
    using range2d = fj::blocked_range2d<std::size_t>;
    const std::vector<std::int64_t>* in;
    std::vector<std::int64_t>* out;
    std::size_t width;
    std::vector<std::int64_t> sums;

    column_scan(const std::vector<std::int64_t>& i, std::vector<std::int64_t>& o, std::size_t w)
        : in(&i), out(&o), width(w), sums(w, 0) {}
    column_scan(column_scan& b, fj::split) : in(b.in), out(b.out), width(b.width), sums(width, 0) {}
    template <class Tag>
    void operator()(const range2d& r, Tag tag) {
        for (std::size_t y = r.rows().begin(); y != r.rows().end(); ++y)
            for (std::size_t x = r.cols().begin(); x != r.cols().end(); ++x) {
                sums[x] += (*in)[y * width + x];
                if (tag)
                    (*out)[y * width + x] = sums[x];
            }
    }
    void reverse_join(column_scan& left) {
        for (std::size_t x = 0; x < width; ++x)
            sums[x] += left.sums[x];
    }
    void assign(column_scan& b) { sums = b.sums; }
};

TEST_P(body_scan_test, a_2d_range_scans_each_column) {
    fj::scheduler pool(workers());
    const std::size_t height = 301, width = 97;
    const auto in = input(height * width);
    std::vector<std::int64_t> expected(in.size());
    for (std::size_t x = 0; x < width; ++x) {
        std::int64_t s = 0;
        for (std::size_t y = 0; y < height; ++y)
            expected[y * width + x] = s += in[y * width + x];
    }
    for (const std::size_t grain : {1u, 4u, 32u}) {
        std::vector<std::int64_t> out(in.size(), -7);
        column_scan body(in, out, width);
        fj::parallel_scan(pool, column_scan::range2d(0, height, grain, 0, width, grain), body);
        EXPECT_EQ(out, expected) << "grain=" << grain;
        for (std::size_t x = 0; x < width; ++x)
            EXPECT_EQ(body.sums[x], expected[(height - 1) * width + x]);
    }
}

// A state whose combination does not commute: the polynomial hash of the prefix,
// h(x0..xi) = x0*B^i + ... + xi (mod 2^64). reverse_join(left) must put left first.
struct prefix_hash {
    static constexpr std::uint64_t k_base = 1'000'003;
    const std::uint64_t* in;
    std::uint64_t* out;
    std::uint64_t hash = 0;
    std::uint64_t power = 1; // k_base^(elements so far)

    prefix_hash(const std::uint64_t* i, std::uint64_t* o) : in(i), out(o) {}
    prefix_hash(prefix_hash& b, fj::split) : in(b.in), out(b.out) {}
    template <class Tag>
    void operator()(const range1d& r, Tag) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
            hash = hash * k_base + in[i];
            power *= k_base;
            if (Tag::is_final_scan())
                out[i] = hash;
        }
    }
    void reverse_join(prefix_hash& left) {
        hash = left.hash * power + hash;
        power *= left.power;
    }
    void assign(prefix_hash& b) {
        hash = b.hash;
        power = b.power;
    }
};

TEST_P(body_scan_test, a_non_commutative_state_keeps_the_serial_order) {
    fj::scheduler pool(workers());
    const std::size_t n = 200'003;
    std::vector<std::uint64_t> in(n), expected(n);
    fj_test::rng r(77);
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < n; ++i) {
        in[i] = r.next();
        expected[i] = h = h * prefix_hash::k_base + in[i];
    }
    for (std::size_t round = 0; round < fj_test::scaled(10); ++round)
        for (const std::size_t grain : {0u, 1u, 97u}) {
            std::vector<std::uint64_t> out(n, 0);
            prefix_hash body(in.data(), out.data());
            fj::parallel_scan(pool, with_grain(n, grain), body);
            ASSERT_EQ(out, expected) << "round " << round << " grain=" << grain;
            ASSERT_EQ(body.hash, expected.back());
        }
}

// A user's own range: the multiples of `step` in [lo, hi), split at a multiple.
struct multiples {
    std::size_t lo, hi, step;
    multiples(std::size_t l, std::size_t h, std::size_t s) : lo(l), hi(h), step(s) {}
    multiples(multiples& r, fj::split) : hi(r.hi), step(r.step) {
        lo = r.lo + (r.hi - r.lo) / r.step / 2 * r.step;
        r.hi = lo;
    }
    bool empty() const { return lo >= hi; }
    bool is_divisible() const { return hi - lo > 2 * step; }
};

// Which multiples were final-scanned, in what order within the body, and with what count before.
struct multiples_scan {
    std::vector<std::size_t>* out;
    std::size_t count = 0; // multiples so far
    std::size_t last = 0;  // the last one final-scanned by this body, + 1
    bool in_order = true;

    explicit multiples_scan(std::vector<std::size_t>& o) : out(&o) {}
    multiples_scan(multiples_scan& b, fj::split) : out(b.out) {}
    void operator()(const multiples& r, fj::pre_scan_tag) {
        for (std::size_t k = r.lo; k < r.hi; k += r.step)
            ++count;
    }
    void operator()(const multiples& r, fj::final_scan_tag) {
        for (std::size_t k = r.lo; k < r.hi; k += r.step) {
            if (k + 1 <= last)
                in_order = false;
            last = k + 1;
            (*out)[k / r.step] = ++count;
        }
    }
    void reverse_join(multiples_scan& left) { count += left.count; }
    void assign(multiples_scan& b) { count = b.count; }
};

TEST_P(body_scan_test, a_users_range_with_separate_tag_overloads) {
    fj::scheduler pool(workers());
    const std::size_t step = 3, n = 30'011;
    std::vector<std::size_t> out(n, 0);
    multiples_scan body(out);
    fj::parallel_scan(pool, multiples(0, n * step, step), body);
    EXPECT_EQ(body.count, n);
    EXPECT_TRUE(body.in_order);
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(out[i], i + 1) << i;
}

TEST(body_scan_tags, convert_to_their_pass) {
    static_assert(!fj::pre_scan_tag::is_final_scan());
    static_assert(fj::final_scan_tag::is_final_scan());
    constexpr bool pre = fj::pre_scan_tag{};
    constexpr bool fin = fj::final_scan_tag{};
    static_assert(!pre && fin);
    fj::final_scan_tag tag;
    EXPECT_TRUE(tag);
}

// --- exceptions ----------------------------------------------------------------------------------

using fj_test::at_index;

// A prefix_sum that throws when either pass reaches one of `bad`.
struct throwing_sum : prefix_sum {
    std::vector<std::size_t> bad;
    throwing_sum(const std::int64_t* i, std::int64_t* o, scan_counts& c, std::vector<std::size_t> b)
        : prefix_sum(i, o, c), bad(std::move(b)) {}
    throwing_sum(throwing_sum& b, fj::split s) : prefix_sum(b, s), bad(b.bad) {}
    template <class Tag>
    void operator()(const range1d& r, Tag tag) {
        for (std::size_t k : bad)
            if (r.begin() <= k && k < r.end())
                throw at_index(k);
        prefix_sum::operator()(r, tag);
    }
    void reverse_join(throwing_sum& left) { prefix_sum::reverse_join(left); }
    void assign(throwing_sum& b) { prefix_sum::assign(b); }
};

TEST_P(body_scan_test, the_first_piece_in_serial_order_that_threw_wins) {
    fj::scheduler pool(workers());
    const std::size_t n = 100'000;
    const auto in = input(n);
    const auto expected = serial_scan(in);
    for (int round = 0; round < 20; ++round) {
        for (const std::size_t grain : {0u, 64u}) {
            scan_counts counts;
            std::vector<std::int64_t> out(n, -7);
            throwing_sum body(in.data(), out.data(), counts, {90'001, 20'001, 60'000});
            try {
                fj::parallel_scan(pool, with_grain(n, grain), body);
                ADD_FAILURE() << "no exception";
            } catch (const at_index& e) {
                EXPECT_EQ(e.index, 20'001u);
            }
        }
    }
    // The scheduler is fine afterwards.
    scan_counts counts;
    std::vector<std::int64_t> out(n, -7);
    prefix_sum body(in.data(), out.data(), counts);
    fj::parallel_scan(pool, range1d(0, n), body);
    EXPECT_EQ(out, expected);
}

// Makes sure a pre-scan happens: the first piece's final scan waits until another worker has
// pre-scanned something (a thief takes a right half while the first piece still runs).
struct stalling_sum : prefix_sum {
    enum class fault { none, pre_scan, reverse_join, split };
    fault what;
    stalling_sum(const std::int64_t* i, std::int64_t* o, scan_counts& c, fault f)
        : prefix_sum(i, o, c), what(f) {}
    stalling_sum(stalling_sum& b, fj::split s) : prefix_sum(b, s), what(b.what) {
        if (what == fault::split)
            throw std::length_error("split");
    }
    template <class Tag>
    void operator()(const range1d& r, Tag tag) {
        if (!Tag::is_final_scan()) {
            counts->pre_attempts.fetch_add(1);
            if (what == fault::pre_scan)
                throw std::domain_error("pre-scan");
        }
        prefix_sum::operator()(r, tag);
        if (Tag::is_final_scan() && r.begin() == 0) {
            const bool stolen = fj_test::spin_until([&] {
                return what == fault::split ? counts->splits.load() > 0
                                            : counts->pre_attempts.load() > 0;
            });
            EXPECT_TRUE(stolen) << "no worker took a right half while the first piece ran";
        }
    }
    void reverse_join(stalling_sum& left) {
        if (what == fault::reverse_join)
            throw std::overflow_error("reverse_join");
        prefix_sum::reverse_join(left);
    }
    void assign(stalling_sum& b) { prefix_sum::assign(b); }
};

class body_scan_stolen_test : public fj_test::workers_test {};

TEST_P(body_scan_stolen_test, a_stolen_half_is_pre_scanned_and_the_result_is_exact) {
    fj::scheduler pool(workers());
    const std::size_t n = 200'000;
    const auto in = input(n);
    const auto expected = serial_scan(in);
    for (const std::size_t grain : {0u, 1000u}) {
        scan_counts counts;
        std::vector<std::int64_t> out(n, -7);
        stalling_sum body(in.data(), out.data(), counts, stalling_sum::fault::none);
        fj::parallel_scan(pool, with_grain(n, grain), body);
        EXPECT_EQ(out, expected);
        EXPECT_EQ(body.sum, expected.back());
        EXPECT_GT(counts.pre_calls.load(), 0);
        EXPECT_GT(counts.splits.load(), 0);
        EXPECT_EQ(counts.final_elements.load(), static_cast<long>(n));
    }
}

TEST_P(body_scan_stolen_test,
       exceptions_from_the_pre_scan_reverse_join_and_split_reach_the_caller) {
    fj::scheduler pool(workers());
    const std::size_t n = 200'000;
    const auto in = input(n);
    std::vector<std::int64_t> out(n, -7);
    {
        scan_counts counts;
        stalling_sum body(in.data(), out.data(), counts, stalling_sum::fault::pre_scan);
        EXPECT_THROW(fj::parallel_scan(pool, range1d(0, n), body), std::domain_error);
    }
    {
        scan_counts counts;
        stalling_sum body(in.data(), out.data(), counts, stalling_sum::fault::reverse_join);
        EXPECT_THROW(fj::parallel_scan(pool, range1d(0, n), body), std::overflow_error);
    }
    {
        scan_counts counts;
        stalling_sum body(in.data(), out.data(), counts, stalling_sum::fault::split);
        EXPECT_THROW(fj::parallel_scan(pool, range1d(0, n), body), std::length_error);
    }
    // What was final-scanned was final-scanned with its exact state.
    const auto expected = serial_scan(in);
    for (int round = 0; round < 10; ++round) {
        scan_counts counts;
        std::vector<std::int64_t> partial(n, -7);
        throwing_sum body(in.data(), partial.data(), counts, {150'000});
        EXPECT_THROW(fj::parallel_scan(pool, range1d(0, n, 1000), body), at_index);
        for (std::size_t i = 0; i < n; ++i)
            if (partial[i] != -7) {
                ASSERT_EQ(partial[i], expected[i]) << i;
            }
    }
}

// --- stop requests -------------------------------------------------------------------------------

// Asks for a stop after each piece.
struct stopping_sum : prefix_sum {
    std::stop_source* source;
    stopping_sum(const std::int64_t* i, std::int64_t* o, scan_counts& c, std::stop_source& s)
        : prefix_sum(i, o, c), source(&s) {}
    stopping_sum(stopping_sum& b, fj::split s) : prefix_sum(b, s), source(b.source) {}
    template <class Tag>
    void operator()(const range1d& r, Tag tag) {
        prefix_sum::operator()(r, tag);
        source->request_stop();
    }
    void reverse_join(stopping_sum& left) { prefix_sum::reverse_join(left); }
    void assign(stopping_sum& b) { prefix_sum::assign(b); }
};

TEST_P(body_scan_test, a_stop_request_ends_it_with_operation_cancelled) {
    fj::scheduler pool(workers());
    const std::size_t n = 100'000;
    const auto in = input(n);
    std::vector<std::int64_t> out(n, -7);
    {
        std::stop_source source;
        source.request_stop();
        scan_counts counts;
        prefix_sum body(in.data(), out.data(), counts);
        EXPECT_THROW(fj::parallel_scan(pool, range1d(0, n), body, source.get_token()),
                     fj::operation_cancelled);
        EXPECT_EQ(counts.final_calls.load() + counts.pre_calls.load(), 0);
    }
    {
        std::stop_source source;
        scan_counts counts;
        stopping_sum body(in.data(), out.data(), counts, source);
        EXPECT_THROW(fj::parallel_scan(pool, range1d(0, n, 10), body, source.get_token()),
                     fj::operation_cancelled);
        EXPECT_LT(counts.final_elements.load(), static_cast<long>(n));
    }
}

// --- stress --------------------------------------------------------------------------------------

TEST(body_scan_stress, random_sizes_grains_and_workers) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const auto budget = std::chrono::seconds(fj_test::k_sanitized ? 4 : 2);
    const auto start = std::chrono::steady_clock::now();
    fj::scheduler pools[] = {fj::scheduler(2), fj::scheduler(3), fj::scheduler(4)};
    fj_test::rng r(2024);
    const auto in = input(300'000);
    std::vector<std::int64_t> expected = serial_scan(in);
    int rounds = 0, stolen = 0;
    while (rounds < 20 || std::chrono::steady_clock::now() - start < budget) {
        if (rounds >= 2000)
            break;
        ++rounds;
        const std::size_t n = r.below(in.size() + 1);
        const std::size_t grain = r.below(3) == 0 ? 0 : 1 + r.below(r.below(2) == 0 ? 16 : 5000);
        fj::scheduler& pool = pools[r.below(3)];
        scan_counts counts;
        std::vector<std::int64_t> out(n, -7);
        prefix_sum body(in.data(), out.data(), counts);
        fj::parallel_scan(pool, with_grain(n, grain), body);
        ASSERT_TRUE(std::equal(out.begin(), out.end(), expected.begin()))
            << "round " << rounds << " n=" << n << " grain=" << grain;
        ASSERT_EQ(body.sum, n == 0 ? 0 : expected[n - 1]);
        ASSERT_EQ(counts.final_elements.load(), static_cast<long>(n));
        stolen += counts.pre_calls.load() > 0 ? 1 : 0;
    }
    RecordProperty("rounds", rounds);
    RecordProperty("rounds_with_a_pre_scan", stolen);
    std::printf("rounds %d, with a pre-scan %d\n", rounds, stolen);
}

INSTANTIATE_TEST_SUITE_P(workers, body_scan_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);
INSTANTIATE_TEST_SUITE_P(workers, body_scan_stolen_test, fj_test::multi_worker_counts(),
                         fj_test::worker_count_name);

} // namespace
