// The misuse catalogue (misuse_support.hpp), by argument: calls that do not compile, reversed,
// overflowing and full-width ranges, zero grains and steps, and empty callables.
#include "misuse_support.hpp"

namespace {

using namespace std::chrono_literals;
using namespace fj_test::misuse;

// --- Compile-time rejections ---------------------------------------------------------------------
// Nonsense that does not compile: each overload is constrained, so the call has no match (these
// are requires-expressions, false when the call would not compile).

template <class Body, class A = int>
constexpr bool parallel_for_accepts = requires(fj::scheduler& s, Body body, A a) {
    fj::parallel_for(s, a, a, body);
};
static_assert(parallel_for_accepts<void (*)(int)>);
static_assert(!parallel_for_accepts<void (*)(std::string)>);    // body cannot take the index
static_assert(!parallel_for_accepts<void (*)(double), double>); // not an integral index type
template <class Map, class Reduce>
constexpr bool parallel_reduce_accepts = requires(fj::scheduler& s, Map map, Reduce reduce) {
    fj::parallel_reduce(s, 0, 10, 0, map, reduce);
};
static_assert(parallel_reduce_accepts<int (*)(int), std::plus<>>);
static_assert(!parallel_reduce_accepts<int (*)(int), std::string (*)(int, int)>); // not T
template <class F>
constexpr bool submit_accepts = requires(fj::scheduler& s, F f) {
    s.submit(f);
};
static_assert(submit_accepts<int (*)()>);
static_assert(!submit_accepts<int>);          // not callable
static_assert(!submit_accepts<int (*)(int)>); // needs an argument
// then(f) with an f that cannot take the value does not compile either (inside then_result, so
// it is not SFINAE-friendly and cannot be checked here).

// --- Ranges, steps and grains --------------------------------------------------------------------

// Reversed ranges are reported with both ends, by every form, before any body runs.
TEST_F(misuse_test, ReversedRangesNameBothEnds) {
    fj::scheduler sched(2);
    std::atomic<int> calls{0};
    auto body = [&](int) { ++calls; };
    auto map = [&](int i) {
        ++calls;
        return i;
    };
    EXPECT_THROW_WITH(fj::parallel_for(sched, 10, 5, body), std::invalid_argument,
                      "fj::parallel_for: reversed range (first 10 > last 5)");
    EXPECT_THROW_WITH(fj::parallel_for(sched, 10, 5, 2, body), std::invalid_argument,
                      "reversed range (first 10 > last 5)");
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, 5, 4, 0, map, std::plus<>{}),
                      std::invalid_argument,
                      "fj::parallel_reduce: reversed range (first 5 > last 4)");
    EXPECT_THROW_WITH((void)fj::blocked_range<int>(5, 4), std::invalid_argument,
                      "fj::blocked_range: reversed range (begin 5 > end 4)");
    std::vector<int> v(4);
    EXPECT_THROW_WITH(fj::parallel_for_each(sched, v.end(), v.begin(), [&](int&) { ++calls; }),
                      std::invalid_argument,
                      "fj::parallel_for_each: reversed iterator range (last is 4 elements before "
                      "first)");
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, v.end(), v.begin(), 0, map, std::plus<>{}),
                      std::invalid_argument, "fj::parallel_reduce: reversed iterator range");
    EXPECT_EQ(calls.load(), 0);
}

// A negative first with an unsigned last would wrap to 2^64 - 1 in the common (unsigned) type: it
// is reported instead. An unsigned first above a negative last is a reversed range.
TEST_F(misuse_test, NegativeFirstWithUnsignedLastIsReported) {
    fj::scheduler sched(2);
    std::atomic<int> calls{0};
    EXPECT_THROW_WITH(fj::parallel_for(sched, -1, std::size_t{10}, [&](std::size_t) { ++calls; }),
                      std::invalid_argument,
                      "first -1 and last 10 do not fit one index type (a negative first with an "
                      "unsigned last?)");
    EXPECT_THROW_WITH((void)fj::parallel_reduce(
                          sched, -5, 5u, 0u, [&](unsigned i) { return i; }, std::plus<>{}),
                      std::invalid_argument, "first -5 and last 5 do not fit one index type");
    EXPECT_THROW_WITH(fj::parallel_for(sched, std::size_t{0}, -1, [&](std::size_t) { ++calls; }),
                      std::invalid_argument, "reversed range (first 0 > last -1)");
    EXPECT_EQ(calls.load(), 0);
}

// The widest ranges work: INT_MIN..INT_MAX (2^32 - 1 indices) and the 64-bit extremes, by every
// form, with no overflow in the size, the splitting or the strided index arithmetic.
TEST_P(misuse_workers_test, FullWidthRangesWork) {
    fj::scheduler sched(workers());

    // Blocked, fixed grain: ~256 chunks that tile [INT_MIN, INT_MAX) exactly.
    std::atomic<std::uint64_t> covered{0};
    std::atomic<bool> saw_first{false}, saw_last{false}, bad_chunk{false};
    fj::parallel_for(sched, fj::blocked_range<int>{INT_MIN, INT_MAX, std::size_t{1} << 24},
                     [&](fj::blocked_range<int> r) {
                         if (r.empty() || r.size() > (std::size_t{1} << 24))
                             bad_chunk = true;
                         if (r.begin() == INT_MIN)
                             saw_first = true;
                         if (r.end() == INT_MAX)
                             saw_last = true;
                         covered += r.size();
                     });
    EXPECT_EQ(covered.load(), 4294967295u);
    EXPECT_TRUE(saw_first.load() && saw_last.load());
    EXPECT_FALSE(bad_chunk.load());

    // parallel_reduce with its default grain (about 1024 leaves) over the same range.
    const auto sizes = [](auto r, std::uint64_t acc) { return acc + r.size(); };
    EXPECT_EQ(fj::parallel_reduce(sched, fj::blocked_range<int>{INT_MIN, INT_MAX}, std::uint64_t{0},
                                  sizes, std::plus<>{}),
              4294967295u);
    // 64-bit: 2^64 - 1 indices with a grain, and 2^64 - 1024 with the default grain (the largest
    // size the default grain handles: see the known problem ReduceNearTwoTo64WithoutGrain).
    covered = 0;
    fj::parallel_for(sched,
                     fj::blocked_range<std::int64_t>{INT64_MIN, INT64_MAX, std::size_t{1} << 58},
                     [&](fj::blocked_range<std::int64_t> r) { covered += r.size(); });
    EXPECT_EQ(covered.load(), UINT64_MAX);
    EXPECT_EQ(fj::parallel_reduce(sched,
                                  fj::blocked_range<std::int64_t>{INT64_MIN, INT64_MAX - 1023},
                                  std::uint64_t{0}, sizes, std::plus<>{}),
              UINT64_MAX - 1023);

    // Index forms over INT_MIN..INT_MAX: a body that throws at every index stops the loop at once;
    // the first index, INT_MIN, is the one reported (lowest index wins).
    const auto first_index_thrown = [&](auto&& loop) {
        try {
            loop();
        } catch (int i) {
            return i;
        }
        return 0;
    };
    EXPECT_EQ(first_index_thrown(
                  [&] { fj::parallel_for(sched, INT_MIN, INT_MAX, [](int i) { throw i; }); }),
              INT_MIN);
    EXPECT_EQ(first_index_thrown([&] {
                  (void)fj::parallel_reduce(
                      sched, INT_MIN, INT_MAX, 0, [](int i) -> int { throw i; }, std::plus<>{});
              }),
              INT_MIN);

    // Strides that cross zero or reach the top of the type.
    const auto strided = [&](auto first, auto last, auto step) {
        using Index = std::common_type_t<decltype(first), decltype(last)>;
        std::vector<Index> seen;
        std::mutex mutex;
        fj::parallel_for(sched, first, last, step, [&](Index i) {
            std::lock_guard lock(mutex);
            seen.push_back(i);
        });
        std::sort(seen.begin(), seen.end());
        return seen;
    };
    EXPECT_EQ(strided(INT_MIN, INT_MAX, INT_MAX), (std::vector<int>{INT_MIN, -1, INT_MAX - 1}));
    EXPECT_EQ(strided(std::int8_t{-128}, std::int8_t{127}, 100),
              (std::vector<std::int8_t>{-128, -28, 72}));
    EXPECT_EQ(strided(UINT64_MAX - 3, UINT64_MAX, 2),
              (std::vector<std::uint64_t>{UINT64_MAX - 3, UINT64_MAX - 1}));
    EXPECT_EQ(strided(0, 10, std::int64_t{1} << 40), std::vector<int>{0}); // step wider than Index
}

// A zero grain is rejected where it is written, by fj::grain and by blocked_range.
TEST_F(misuse_test, ZeroGrainIsRejectedWhereWritten) {
    EXPECT_THROW_WITH((void)fj::grain{0}, std::invalid_argument,
                      "fj::grain: the grain size must be at least 1, not 0");
    EXPECT_THROW_WITH((void)fj::blocked_range<int>(0, 4, 0), std::invalid_argument,
                      "fj::blocked_range: the grain size must be at least 1, not 0");
    // A grain larger than the range is fine: one chunk.
    fj::scheduler sched(2);
    std::atomic<int> chunks{0};
    fj::parallel_for(sched, fj::blocked_range<int>{0, 10, SIZE_MAX},
                     [&](fj::blocked_range<int> r) { chunks += r.size() == 10 ? 1 : 100; });
    EXPECT_EQ(chunks.load(), 1);
}

// A step of zero or below is rejected with its value, even for an empty range.
TEST_F(misuse_test, NonPositiveStepIsRejectedWithItsValue) {
    fj::scheduler sched(2);
    std::atomic<int> calls{0};
    auto body = [&](int) { ++calls; };
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, 0, body), std::invalid_argument,
                      "fj::parallel_for: the step must be positive, not 0");
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, -3, body), std::invalid_argument,
                      "the step must be positive, not -3");
    EXPECT_THROW_WITH(fj::parallel_for(sched, 5, 5, 0, body), std::invalid_argument,
                      "the step must be positive, not 0");
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, -1, body, fj::grain{2}), std::invalid_argument,
                      "not -1");
    EXPECT_EQ(calls.load(), 0);
}

// --- Empty callables -----------------------------------------------------------------------------

// A null function pointer or an empty std::function is rejected by every runtime entry point
// with std::invalid_argument saying "empty callable", from outside and from inside a task, and
// nothing is queued: the scheduler keeps working.
TEST_F(misuse_test, EmptyCallablesRejectedByRuntimeEntryPoints) {
    fj::scheduler sched(2);
    int (*null_fn)() = nullptr;
    std::function<int()> empty;
    EXPECT_THROW_WITH((void)sched.submit(null_fn), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)sched.submit(empty), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)sched.fork(null_fn), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)sched.fork(empty), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)fj::async(sched, null_fn), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)fj::async(sched, empty), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)sched.join(null_fn, three), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)sched.join(three, empty), std::invalid_argument, k_empty_callable);

    // Inside a task: the free functions take the worker fast paths.
    auto inside = sched.submit([&] {
        std::string problems;
        const auto expect_rejected = [&](const char* what, auto&& call) {
            const thrown t = catch_as<std::invalid_argument>(call);
            if (!t.right_type || t.what.find(k_empty_callable) == std::string::npos)
                problems += std::string(what) + ": " + t.what + "; ";
        };
        expect_rejected("fj::fork(null)", [&] { (void)fj::fork(null_fn); });
        expect_rejected("fj::async(empty)", [&] { (void)fj::async(empty); });
        expect_rejected("fj::join(null, f)", [&] { (void)fj::join(null_fn, three); });
        expect_rejected("fj::join(f, empty)", [&] { (void)fj::join(three, empty); });
        return problems;
    });
    EXPECT_EQ(fj_test::get_or(inside, std::string("hang")), "");
    auto ok = sched.submit(three);
    EXPECT_EQ(fj_test::get_or(ok, -1), 3);
}

// The algorithms and then() reject empty callables the same way, even over an empty range, and
// leave everything as it was (then() keeps its future).
TEST_F(misuse_test, EmptyCallablesRejectedByAlgorithmsAndThen) {
    fj::scheduler sched(2);
    void (*null_body)(int) = nullptr;
    std::function<void(int)> empty_body;
    int (*null_map)(int) = nullptr;
    std::function<int(int, int)> empty_reduce;
    int (*null_chunk)(fj::blocked_range<int>, int) = nullptr;
    void (*null_void)() = nullptr;
    std::vector<int> v(8);

    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, null_body), std::invalid_argument,
                      k_empty_callable);
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 0, empty_body), std::invalid_argument,
                      k_empty_callable);
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, 2, null_body), std::invalid_argument,
                      k_empty_callable);
    EXPECT_THROW_WITH(fj::parallel_for(sched, fj::blocked_range<int>{0, 10},
                                       std::function<void(fj::blocked_range<int>)>{}),
                      std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH(fj::parallel_for_each(sched, v.begin(), v.end(), std::function<void(int&)>{}),
                      std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, 0, 10, 0, null_map, std::plus<>{}),
                      std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)fj::parallel_reduce(
                          sched, 0, 10, 0, [](int i) { return i; }, empty_reduce),
                      std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, fj::blocked_range<int>{0, 10}, 0, null_chunk,
                                                std::plus<>{}),
                      std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, v.begin(), v.end(), 0,
                                                std::function<int(int)>{}, std::plus<>{}),
                      std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH(fj::parallel_invoke(sched, null_void), std::invalid_argument,
                      k_empty_callable);
    EXPECT_THROW_WITH(fj::parallel_invoke(
                          sched, [] {}, [] {}, std::function<void()>{}),
                      std::invalid_argument, k_empty_callable);

    auto f = sched.submit([] { return 20; });
    EXPECT_THROW_WITH((void)f.then(null_map), std::invalid_argument, k_empty_callable);
    EXPECT_THROW_WITH((void)f.then(std::function<int(int)>{}), std::invalid_argument,
                      k_empty_callable);
    ASSERT_TRUE(f.valid()) << "a rejected then() consumed its future";
    auto g = f.then([](int x) { return x + 1; });
    EXPECT_EQ(fj_test::get_or(g, -1), 21);
}

} // namespace
