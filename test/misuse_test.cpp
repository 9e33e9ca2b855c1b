// The misuse catalogue of docs/errors.md: every public entry point given nonsense. Each test
// checks what happens (the exception type and a key phrase of its message, or that the call
// works) for the rows that no other suite already checks in full; the table names those suites.
// The last section holds the problems the catalogue found, each fixed (docs/errors.md, "Found by
// this catalogue, and fixed").
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

namespace {

using namespace std::chrono_literals;

// --- Helpers -------------------------------------------------------------------------------------

// What a statement threw, as seen through `catch (const E&)`.
struct thrown {
    bool right_type = false;
    std::string what; // e.what(), or what happened instead
};

template <class E, class F>
thrown catch_as(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return {true, e.what()};
    } catch (const std::exception& e) {
        return {false,
                std::string("a different exception (") + typeid(e).name() + "): " + e.what()};
    } catch (...) {
        return {false, "an exception not derived from std::exception"};
    }
    return {false, "no exception"};
}

// The statement throws `type` (or a type derived from it) whose what() contains `phrase`.
#define EXPECT_THROW_WITH(statement, type, phrase)                                                 \
    do {                                                                                           \
        const thrown thrown_ = catch_as<type>([&] { statement; });                                 \
        EXPECT_TRUE(thrown_.right_type)                                                            \
            << #statement << "\n  expected " #type ", got " << thrown_.what;                       \
        EXPECT_NE(thrown_.what.find(phrase), std::string::npos)                                    \
            << #statement << "\n  message \"" << thrown_.what << "\" lacks \"" << (phrase)         \
            << "\"";                                                                               \
    } while (false)

// The statement throws std::future_error with code no_state.
#define EXPECT_NO_STATE(statement)                                                                 \
    do {                                                                                           \
        try {                                                                                      \
            statement;                                                                             \
            ADD_FAILURE() << #statement << ": no exception";                                       \
        } catch (const std::future_error& e) {                                                     \
            EXPECT_EQ(e.code(), std::make_error_code(std::future_errc::no_state)) << #statement;   \
        } catch (...) {                                                                            \
            ADD_FAILURE() << #statement << ": not a std::future_error";                            \
        }                                                                                          \
    } while (false)

constexpr const char* k_empty_callable = "empty callable";
constexpr const char* k_closed = "cannot submit work after shutdown() has begun";

int three() {
    return 3;
}

// Thrown by tasks: exceptions that are not std::exceptions.
struct custom_failure {
    int code;
};

// Every test body runs under the watchdog.
class misuse_test : public fj_test::guarded_test {};
// Rows where the worker count matters (who runs what, stealing, helping): 1..4 workers.
class misuse_workers_test : public fj_test::workers_test {};

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

// --- Futures -------------------------------------------------------------------------------------

// cancel() and then() on an empty future (default-constructed, moved from, consumed by get() or
// by then()) throw std::future_error(no_state), like every other use (future_test checks get,
// wait, wait_for, wait_until, is_ready).
TEST_F(misuse_test, CancelAndThenOnEmptyFutureThrowNoState) {
    fj::future<int> empty;
    EXPECT_NO_STATE((void)empty.cancel());
    EXPECT_NO_STATE((void)empty.then([](int x) { return x; }));
    fj::future<void> empty_void;
    EXPECT_NO_STATE((void)empty_void.cancel());
    EXPECT_NO_STATE((void)empty_void.then([] {}));

    fj::scheduler sched(2);
    auto f = sched.submit([] { return 1; });
    auto moved = std::move(f);
    EXPECT_NO_STATE((void)f.cancel()); // NOLINT(bugprone-use-after-move): the moved-from state
    EXPECT_NO_STATE((void)f.then([](int x) { return x; }));
    auto next = moved.then([](int x) { return x + 1; });
    EXPECT_NO_STATE((void)moved.then([](int x) { return x; })); // then() consumed it
    EXPECT_NO_STATE((void)moved.get());
    EXPECT_EQ(fj_test::get_or(next, -1), 2);
    EXPECT_NO_STATE((void)next.cancel()); // get() consumed it
    EXPECT_NO_STATE((void)next.get());
}

// when_all / when_any reject an empty input future, naming its position. The inputs were moved
// in, so the valid ones are dropped (their tasks still run; their results are lost).
TEST_F(misuse_test, WhenAllWhenAnyRejectEmptyInputByPosition) {
    fj::scheduler sched(2);
    std::atomic<int> ran{0};
    const auto make_inputs = [&] {
        std::vector<fj::future<int>> inputs;
        inputs.push_back(sched.submit([&] { return ++ran; }));
        inputs.emplace_back();
        return inputs;
    };
    EXPECT_THROW_WITH((void)fj::when_all(make_inputs()), std::invalid_argument,
                      "fj::when_all: input 1 is an empty future");
    EXPECT_THROW_WITH((void)fj::when_any(make_inputs()), std::invalid_argument,
                      "fj::when_any: input 1 is an empty future");
    auto consumed = sched.submit([] { return 1; });
    (void)consumed.get();
    EXPECT_THROW_WITH((void)fj::when_all(std::move(consumed), sched.submit([&] { ++ran; })),
                      std::invalid_argument, "fj::when_all: input 0 is an empty future");
    // (The tuple form of when_any is left out here: GCC 12 gives a false -Wstringop-overflow
    // warning for it under -fsanitize=address.)
    EXPECT_THROW_WITH((void)fj::when_any(std::vector<fj::future<double>>(1)), std::invalid_argument,
                      "input 0 is an empty future (default-constructed, moved from or already "
                      "consumed by get())");
    EXPECT_TRUE(fj_test::spin_until([&] { return ran.load() == 3; }))
        << "a dropped input's task did not run";
}

// cancel(): true once for a task that has not started, then false; get() throws
// fj::task_cancelled with its message and empties the future; the cancellation flows through
// then() and when_all(); futures that cannot be cancelled (ready, running, when_all's) say false
// and keep their value; a cancelled continuation never runs and frees its antecedent (ASan).
TEST_P(misuse_workers_test, CancelTwiceAndGetAfterCancel) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    std::vector<fj::future<void>> blockers = fj_test::occupy_workers(sched, release);
    std::atomic<int> ran{0};
    const auto task = [&] {
        ++ran;
        return 1;
    };
    auto victim = sched.submit(task);
    auto through_then = sched.submit(task);
    auto through_all = sched.submit(task);
    auto antecedent = sched.submit([] { return std::string(100, 'x'); }); // will run
    auto continuation = antecedent.then([&](std::string s) {
        ++ran;
        return s.size();
    });

    EXPECT_TRUE(victim.cancel());
    EXPECT_FALSE(victim.cancel()) << "cancel() twice";
    EXPECT_TRUE(victim.is_ready());
    EXPECT_THROW_WITH((void)victim.get(), fj::task_cancelled,
                      "fj::future: the task was cancelled (future::cancel()) before it started");
    EXPECT_FALSE(victim.valid());
    EXPECT_NO_STATE((void)victim.cancel());

    EXPECT_TRUE(through_then.cancel());
    auto after = through_then.then([&](int x) {
        ++ran;
        return x;
    });
    EXPECT_TRUE(through_all.cancel());
    auto all = fj::when_all(std::move(through_all), sched.submit([] { return 2; }));
    EXPECT_FALSE(all.cancel()) << "when_all's future is running from the start";
    EXPECT_TRUE(continuation.cancel()) << "its antecedent has not run yet";

    release = true;
    for (auto& b : blockers)
        ASSERT_TRUE(fj_test::get_void(b));
    ASSERT_TRUE(fj_test::wait_ready(after));
    EXPECT_THROW_WITH((void)after.get(), fj::task_cancelled, "was cancelled");
    ASSERT_TRUE(fj_test::wait_ready(all));
    auto inputs = all.get();
    EXPECT_THROW_WITH((void)std::get<0>(inputs).get(), fj::task_cancelled, "was cancelled");
    EXPECT_EQ(std::get<1>(inputs).get(), 2);
    EXPECT_THROW_WITH((void)continuation.get(), fj::task_cancelled, "was cancelled");

    auto done = sched.submit([] { return 5; });
    done.wait();
    EXPECT_FALSE(done.cancel()) << "already finished";
    EXPECT_EQ(done.get(), 5);
    sched.shutdown(); // every queued task has been taken (and the cancelled ones skipped)
    EXPECT_EQ(ran.load(), 0) << "a cancelled task or continuation ran";
}

// --- Non-std exceptions --------------------------------------------------------------------------

// Exceptions of any type (an int, a struct not derived from std::exception) reach the caller
// unchanged through join, the algorithms, then() and when_all (future_test/exceptions_test cover
// get(), parallel_for_test covers an int through parallel_for).
TEST_P(misuse_workers_test, NonStdExceptionsPropagateUnchanged) {
    fj::scheduler sched(workers());
    const auto code_of = [](auto&& f) {
        try {
            f();
        } catch (const custom_failure& e) {
            return e.code;
        } catch (int i) {
            return -i;
        } catch (...) {
            return -1000;
        }
        return 0;
    };
    // join: either branch, from outside and from inside a task.
    EXPECT_EQ(code_of([&] { sched.join([] { throw custom_failure{1}; }, [] {}); }), 1);
    EXPECT_EQ(code_of([&] { sched.join([] {}, [] { throw 2; }); }), -2);
    auto inside = sched.submit(
        [&] { return code_of([] { fj::join([] { return 1; }, []() -> int { throw 3; }); }); });
    EXPECT_EQ(fj_test::get_or(inside, 0), -3);
    // The algorithms (the lowest index wins, whatever its type).
    EXPECT_EQ(code_of([&] {
                  fj::parallel_for(
                      sched, fj::blocked_range<int>{10, 100, 7},
                      [](fj::blocked_range<int> r) { throw custom_failure{r.begin()}; });
              }),
              10); // every chunk throws: the lowest one, [10, ...), wins
    EXPECT_EQ(code_of([&] {
                  (void)fj::parallel_reduce(
                      sched, 0, 1000, 0,
                      [](int i) {
                          if (i % 100 == 42)
                              throw i;
                          return i;
                      },
                      std::plus<>{});
              }),
              -42);
    EXPECT_EQ(code_of([&] {
                  (void)fj::parallel_reduce(
                      sched, 0, 1000, 0, [](int i) { return i; },
                      [](int, int) -> int { throw custom_failure{5}; }, fj::grain{10});
              }),
              5);
    EXPECT_EQ(code_of([&] {
                  fj::parallel_invoke(
                      sched, [] {}, [] { throw custom_failure{6}; }, [] { throw 7; });
              }),
              6);
    // then(): the antecedent's exception skips the continuation; the continuation's own
    // exception is rethrown by its get().
    std::atomic<int> continued{0};
    auto skipped = sched.submit([]() -> int { throw custom_failure{8}; }).then([&](int x) {
        ++continued;
        return x;
    });
    ASSERT_TRUE(fj_test::wait_ready(skipped));
    EXPECT_EQ(code_of([&] { (void)skipped.get(); }), 8);
    EXPECT_EQ(continued.load(), 0);
    auto throwing = sched.submit([] { return 1; }).then([](int) -> int { throw 9; });
    ASSERT_TRUE(fj_test::wait_ready(throwing));
    EXPECT_EQ(code_of([&] { (void)throwing.get(); }), -9);
    // when_all: the exception stays in its input.
    auto all = fj::when_all(sched.submit([] { throw custom_failure{10}; }),
                            sched.submit([] { return 11; }));
    ASSERT_TRUE(fj_test::wait_ready(all));
    auto inputs = all.get();
    EXPECT_EQ(code_of([&] { std::get<0>(inputs).get(); }), 10);
    EXPECT_EQ(std::get<1>(inputs).get(), 11);
}

// --- Lifecycle -----------------------------------------------------------------------------------

// While shutdown() drains, the pool's own tasks may still submit, fork, async and chain then()
// onto it: accepted, and run before shutdown() returns. Outside threads and tasks of another
// scheduler get fj::scheduler_closed.
TEST_P(misuse_workers_test, OwnTasksMaySubmitWhileClosedAndItRuns) {
    fj::scheduler sched(workers());
    fj::scheduler other(1);
    std::atomic<int> ran{0};
    auto inside = sched.submit([&] {
        if (!fj_test::spin_until([&] { return sched.is_closed(); }))
            return std::string("the scheduler was never closed");
        try {
            (void)sched.submit([&] { ++ran; });
            (void)sched.fork([&] { ++ran; });
            (void)fj::async([&] { ++ran; });
            (void)sched.submit([] { return 1; }).then([&](int) { ++ran; });
            return std::string("accepted");
        } catch (const std::exception& e) {
            return std::string("refused: ") + e.what();
        }
    });
    sched.shutdown(); // closes, then waits for the task above and everything it adds
    EXPECT_EQ(ran.load(), 4) << "work accepted during the drain was lost";
    ASSERT_TRUE(inside.is_ready());
    EXPECT_EQ(inside.get(), "accepted");

    EXPECT_THROW_WITH((void)sched.submit([] {}), fj::scheduler_closed, k_closed);
    auto from_other = other.submit(
        [&] { return catch_as<fj::scheduler_closed>([&] { (void)sched.submit([] {}); }).what; });
    EXPECT_NE(fj_test::get_or(from_other, std::string("hang")).find(k_closed), std::string::npos);
}

// The algorithms called from outside on a shut-down scheduler throw fj::scheduler_closed (they
// run as one task there); with nothing to run they return without touching the scheduler.
TEST_F(misuse_test, AlgorithmsOnClosedSchedulerThrowSchedulerClosed) {
    fj::scheduler sched(2);
    sched.shutdown();
    std::atomic<int> calls{0};
    auto body = [&](int) { ++calls; };
    auto map = [&](int i) {
        ++calls;
        return i;
    };
    std::vector<int> v(4);
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 10, body), fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH(fj::parallel_for_each(sched, v.begin(), v.end(), [&](int&) { ++calls; }),
                      fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH((void)fj::parallel_reduce(sched, 0, 10, 0, map, std::plus<>{}),
                      fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH(fj::parallel_invoke(
                          sched, [&] { ++calls; }, [&] { ++calls; }),
                      fj::scheduler_closed, k_closed);
    EXPECT_THROW_WITH((void)sched.join(three, three), fj::scheduler_closed, k_closed);
    EXPECT_NO_THROW(fj::parallel_for(sched, 0, 0, body));
    EXPECT_EQ(fj::parallel_reduce(sched, 0, 0, 7, map, std::plus<>{}), 7);
    EXPECT_NO_THROW(fj::parallel_invoke(sched));
    EXPECT_EQ(calls.load(), 0);
}

// shutdown() from one of the pool's own tasks throws std::logic_error saying why (it would wait
// for itself), also through a loop body; shutting down *another* scheduler from a task is fine.
TEST_P(misuse_workers_test, ShutdownFromOwnTaskSaysWhy) {
    fj::scheduler sched(workers());
    auto direct =
        sched.submit([&] { return catch_as<std::logic_error>([&] { sched.shutdown(); }).what; });
    EXPECT_NE(fj_test::get_or(direct, std::string("hang"))
                  .find("fj::scheduler::shutdown() called from one of the scheduler's own tasks"),
              std::string::npos);
    EXPECT_THROW_WITH(fj::parallel_for(sched, 0, 4, [&](int) { sched.shutdown(); }),
                      std::logic_error, "Call shutdown() from outside the pool");
    EXPECT_FALSE(sched.is_closed());

    fj::scheduler other(1);
    auto cross = sched.submit([&] {
        other.shutdown();
        return other.is_closed();
    });
    EXPECT_TRUE(fj_test::get_or(cross, false));
    auto still_works = sched.submit(three);
    EXPECT_EQ(fj_test::get_or(still_works, -1), 3);
}

// --- Options and FJ_WORKERS ----------------------------------------------------------------------

// Worker counts above scheduler_options::max_workers (4096) are rejected with the count and the
// limit, by the count constructor and by the options (bad_input_test checks the other options).
TEST_F(misuse_test, AbsurdWorkerCountsNameTheLimit) {
    EXPECT_THROW_WITH(fj::scheduler s(5000), std::invalid_argument,
                      "fj::scheduler: 5000 workers requested; the limit is 4096 (use 0 for one "
                      "per available CPU)");
    EXPECT_THROW_WITH(fj::scheduler s(SIZE_MAX), std::invalid_argument,
                      std::to_string(SIZE_MAX) + " workers requested; the limit is 4096");
    fj::scheduler_options o;
    o.workers = 4097;
    EXPECT_THROW_WITH(fj::scheduler s(o), std::invalid_argument,
                      "4097 workers requested; the limit is 4096");
}

// A stack that cannot be reserved makes the constructor throw std::runtime_error naming the
// worker that failed, after undoing what it started.
TEST_F(misuse_test, UnreservableWorkerStackFailsConstruction) {
    fj::scheduler_options o;
    o.workers = 2;
    o.worker_stack_size = std::size_t{1} << 62; // 4 EiB
    EXPECT_THROW_WITH(fj::scheduler s(o), std::runtime_error,
                      "fj::scheduler: could not start worker thread 1 of 2: ");
    fj::scheduler fine(2); // nothing was left behind
    auto f = fine.submit(three);
    EXPECT_EQ(fj_test::get_or(f, -1), 3);
}

// FJ_WORKERS with trailing junk ("4x") is rejected like the other malformed values that
// bad_input_test's bad_env_test checks, quoting the value and saying what is accepted.
TEST_F(misuse_test, FjWorkersWithTrailingJunkIsRejected) {
    fj_test::scoped_env env("FJ_WORKERS", "4x");
    EXPECT_THROW_WITH(fj::scheduler s, std::invalid_argument,
                      "FJ_WORKERS='4x' is not a worker count: use a whole number from 1 to 4096, "
                      "or unset it to use one worker per available CPU");
    EXPECT_THROW_WITH(fj::scheduler s(std::size_t{0}), std::invalid_argument, "FJ_WORKERS='4x'");
    fj::scheduler explicit_count(2); // an explicit count does not read FJ_WORKERS
    EXPECT_EQ(explicit_count.worker_count(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Workers, misuse_workers_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

// --- Death tests: the process ends (or must start fresh) ----------------------------------------

class misuse_DeathTest : public fj_test::guarded_test {
protected:
    void SetUp() override { ::testing::FLAGS_gtest_death_test_style = "threadsafe"; }
};

void destroy_from_own_task_on_worker() {
    auto* sched = new fj::scheduler(1);
    auto f = sched->submit([sched] { delete sched; });
    f.wait(); // never returns: the destructor terminates the process
}

void destroy_from_own_task_on_helping_thread() {
    auto* sched = new fj::scheduler(1);
    std::atomic<bool> release{false};
    auto blockers = fj_test::occupy_workers(*sched, release);
    auto f = sched->submit([sched] { delete sched; });
    (void)sched->try_run_one(); // the calling thread runs the task: it is one of the pool's
}

// Destroying a scheduler from one of its own tasks cannot work (the destructor waits for every
// task, including the one running it): the runtime prints why and calls std::terminate.
TEST_F(misuse_DeathTest, DestroyFromOwnTaskTerminatesWithMessage) {
    EXPECT_DEATH(destroy_from_own_task_on_worker(),
                 "fj::scheduler destroyed from one of its own tasks: it cannot wait for itself");
    EXPECT_DEATH(destroy_from_own_task_on_helping_thread(), "destroyed from one of its own tasks");
}

// The default scheduler (fj::async, the algorithms without a scheduler) reads FJ_WORKERS when it
// is first used: a malformed value makes that use throw std::invalid_argument quoting it, and a
// later use, with the value fixed, creates it. Needs a fresh process: the default scheduler is
// created once.
void default_scheduler_with_bad_fj_workers() {
    std::string problem;
    {
        fj_test::scoped_env env("FJ_WORKERS", "4x");
        const thrown t = catch_as<std::invalid_argument>([] { (void)fj::async(three); });
        if (!t.right_type ||
            t.what.find("FJ_WORKERS='4x' is not a worker count") == std::string::npos)
            problem = "first use: " + t.what;
    }
    if (problem.empty()) {
        fj_test::scoped_env env("FJ_WORKERS", "3");
        if (fj::async(three).get() != 3)
            problem = "second use: wrong value";
        else if (fj::default_scheduler().worker_count() != 3)
            problem = "second use: not 3 workers";
    }
    std::fprintf(stderr, "%s\n", problem.empty() ? "default scheduler ok" : problem.c_str());
    // _Exit: no atexit work (ThreadSanitizer sleeps a second there); the default scheduler's
    // clean exit is lifecycle_test's business.
    std::_Exit(problem.empty() ? 0 : 1);
}

TEST_F(misuse_DeathTest, DefaultSchedulerRejectsBadFjWorkersThenRecovers) {
    EXPECT_EXIT(default_scheduler_with_bad_fj_workers(), ::testing::ExitedWithCode(0),
                "default scheduler ok");
}

// --- Problems this catalogue found, now fixed (docs/errors.md "Found by this catalogue")
// -----------

// Was KNOWN PROBLEM 1, fixed: reschedule_until() does not check its predicate. A null function
// pointer is called: SIGSEGV. (An empty std::function throws std::bad_function_call: see the next
// test.)
void reschedule_until_null_predicate() {
    fj::scheduler sched(1);
    bool (*null_predicate)() = nullptr;
    const thrown t =
        catch_as<std::invalid_argument>([&] { sched.reschedule_until(null_predicate); });
    std::fprintf(stderr, "%s\n", t.right_type ? "rejected" : t.what.c_str());
    std::_Exit(t.right_type ? 0 : 1);
}

TEST_F(misuse_DeathTest, RescheduleUntilRejectsNullPredicate) {
    EXPECT_EXIT(reschedule_until_null_predicate(), ::testing::ExitedWithCode(0), "rejected");
}

// Was KNOWN PROBLEM 1 (continued), fixed: an empty std::function predicate throws
// std::bad_function_call from inside reschedule_until instead of std::invalid_argument "empty
// callable" like every other entry point.
TEST_F(misuse_test, RescheduleUntilRejectsEmptyStdFunctionPredicate) {
    fj::scheduler sched(1);
    EXPECT_THROW_WITH(sched.reschedule_until(std::function<bool()>{}), std::invalid_argument,
                      k_empty_callable);
    EXPECT_THROW_WITH(fj::reschedule_until(std::function<bool()>{}), std::invalid_argument,
                      k_empty_callable);
}

// Was KNOWN PROBLEM 2, fixed: parallel_reduce without a grain over more than 2^64 - 1024 indices.
// The default grain ceil(n / 1024) is computed as (n + 1023) / 1024, which wraps to 0; a grain of 0
// never stops halving: run(lo, lo + 1) splits into run(lo, lo) and run(lo, lo + 1) forever,
// until the worker's stack overflows (SIGSEGV). The size is reachable with 64-bit blocked ranges.
void reduce_near_two_to_64_without_grain() {
    fj::scheduler sched(2);
    const std::uint64_t n = fj::parallel_reduce(
        sched, fj::blocked_range<std::uint64_t>{0, UINT64_MAX}, std::uint64_t{0},
        [](fj::blocked_range<std::uint64_t> r, std::uint64_t acc) { return acc + r.size(); },
        std::plus<>{});
    std::fprintf(stderr, "%s\n", n == UINT64_MAX ? "reduce ok" : "wrong sum");
    std::_Exit(n == UINT64_MAX ? 0 : 1);
}

TEST_F(misuse_DeathTest, ReduceNearTwoTo64WithoutGrain) {
    EXPECT_EXIT(reduce_near_two_to_64_without_grain(), ::testing::ExitedWithCode(0), "reduce ok");
}

// Was KNOWN PROBLEM 3, fixed (the option is capped at 100 ms): spin_before_sleep has no upper
// bound, and idle workers do not look at the closed flag while they spin, so shutdown() (and the
// destructor) waits up to spin_before_sleep: with an hour, an hour. (microseconds::max() overflows
// steady_clock::now() + spin: undefined behaviour, reported by UBSan.) Fixed means: rejected by the
// constructor, or a prompt shutdown.
TEST_F(misuse_test, LongSpinBeforeSleepDoesNotDelayShutdown) {
    fj::scheduler_options o;
    o.workers = 2;
    o.spin_before_sleep = 5s;
    std::optional<fj::scheduler> sched;
    try {
        sched.emplace(o);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("spin_before_sleep"), std::string::npos) << e.what();
        return; // rejected: fixed
    }
    auto f = sched->submit(three);
    EXPECT_EQ(fj_test::get_or(f, -1), 3);
    const auto start = std::chrono::steady_clock::now();
    sched->shutdown();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s)
        << "shutdown() waited for the idle workers' spin_before_sleep";
}

} // namespace
