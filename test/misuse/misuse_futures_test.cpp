// The misuse catalogue (misuse_support.hpp), futures: empty futures, when_all / when_any given an
// empty input, cancel(), and exceptions that are not std::exceptions.
#include "misuse_support.hpp"

namespace {

using namespace std::chrono_literals;
using namespace fj_test::misuse;

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

} // namespace
