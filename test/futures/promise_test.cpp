// fj::promise<T> and fj::async(f, args...): std::async's and std::promise's shape. Values of
// every kind (value, move-only, reference, void), exceptions, broken_promise, misuse reported as
// std::future_error with the standard codes, waits that park inside tasks, continuations of a
// promise set outside the pool, and arguments decay-copied or moved into async tasks.
#include "support.hpp"

#include <atomic>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

class promise_test : public fj_test::workers_test {};

using fj_test::error_code_of;

// A value set by a plain thread reaches get(); set before get_future() as well.
TEST_P(promise_test, ValueFromAnotherThread) {
    fj::promise<int> p;
    fj::future<int> f = p.get_future();
    std::thread setter([&p] { p.set_value(42); });
    EXPECT_EQ(fj_test::get_or(f, -1), 42);
    setter.join();

    fj::promise<std::string> early;
    early.set_value("set before the future was made");
    fj::future<std::string> g = early.get_future();
    EXPECT_TRUE(g.is_ready());
    EXPECT_EQ(g.get(), "set before the future was made");
}

// The waiter may destroy the promise as soon as get() returns: set_value() touches nothing of
// the promise once the future is ready, though it may still be returning on the setter's thread.
// (Under AddressSanitizer or ThreadSanitizer, a set_value() that wrote to the promise after
// waking the waiter is reported here.)
TEST_P(promise_test, APromiseMayBeDestroyedAsSoonAsGetReturns) {
    const int rounds = fj_test::k_sanitized ? 200 : 2'000;
    for (int round = 0; round < rounds; ++round) {
        auto p = std::make_unique<fj::promise<int>>();
        fj::future<int> f = p->get_future();
        fj::promise<int>* const raw = p.get();
        std::thread setter([raw, round] { raw->set_value(round); });
        EXPECT_EQ(f.get(), round);
        p.reset(); // set_value() may not have returned yet
        setter.join();
    }
}

// Move-only values, references and void.
TEST_P(promise_test, EveryKindOfValue) {
    fj::promise<std::unique_ptr<int>> move_only;
    auto f1 = move_only.get_future();
    move_only.set_value(std::make_unique<int>(7));
    EXPECT_EQ(*f1.get(), 7);

    int target = 3;
    fj::promise<int&> reference;
    auto f2 = reference.get_future();
    reference.set_value(target);
    int& got = f2.get();
    EXPECT_EQ(&got, &target);

    fj::promise<void> nothing;
    auto f3 = nothing.get_future();
    nothing.set_value();
    EXPECT_TRUE(fj_test::get_void(f3));
}

// set_exception's exception comes out of get().
TEST_P(promise_test, ExceptionReachesGet) {
    fj::promise<int> p;
    auto f = p.get_future();
    p.set_exception(std::make_exception_ptr(std::runtime_error("from the producer")));
    try {
        (void)f.get();
        ADD_FAILURE() << "get() returned";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "from the producer");
    }
}

// A promise destroyed without a value: get() throws broken_promise; without a future, nothing
// happens (and nothing leaks: ASan's leak check in the sanitizer presets).
TEST_P(promise_test, BrokenPromise) {
    fj::future<int> f;
    {
        fj::promise<int> p;
        f = p.get_future();
    }
    EXPECT_EQ(error_code_of([&] { (void)f.get(); }), std::future_errc::broken_promise);
    { fj::promise<int> unused; }
    {
        fj::promise<int> set_but_never_read;
        set_but_never_read.set_value(1);
    }
    {
        fj::promise<int> read_and_dropped;
        (void)read_and_dropped.get_future();
        read_and_dropped.set_value(2); // the future is gone: the promise frees the state
    }
}

// Misuse gets the standard's error codes; a bad exception_ptr a clear std::invalid_argument.
TEST_P(promise_test, MisuseIsReportedAsTheStandardDoes) {
    fj::promise<int> p;
    auto f = p.get_future();
    EXPECT_EQ(error_code_of([&] { (void)p.get_future(); }),
              std::future_errc::future_already_retrieved);
    p.set_value(1);
    EXPECT_EQ(error_code_of([&] { p.set_value(2); }), std::future_errc::promise_already_satisfied);
    EXPECT_EQ(error_code_of([&] { p.set_exception(std::make_exception_ptr(1)); }),
              std::future_errc::promise_already_satisfied);
    EXPECT_EQ(f.get(), 1);

    fj::promise<int> moved_from;
    fj::promise<int> owner(std::move(moved_from));
    EXPECT_EQ(error_code_of([&] { (void)moved_from.get_future(); }), std::future_errc::no_state);
    EXPECT_EQ(error_code_of([&] { moved_from.set_value(1); }), std::future_errc::no_state);
    EXPECT_THROW(owner.set_exception(nullptr), std::invalid_argument);
    owner.set_value(5); // still usable after the refusal
    EXPECT_EQ(owner.get_future().get(), 5);
}

// A promise's value cannot be cancelled away: cancel() says false, and the value arrives.
TEST_P(promise_test, CancelReturnsFalse) {
    fj::promise<int> p;
    auto f = p.get_future();
    EXPECT_FALSE(f.cancel());
    p.set_value(9);
    EXPECT_EQ(f.get(), 9);
}

// Tasks wait on promises set by later tasks: more waiters than workers, which parking (or
// helping) must not deadlock, since the setters are queued behind the waiters.
TEST_P(promise_test, TasksWaitOnPromisesSetByLaterTasks) {
    fj::scheduler sched(workers());
    constexpr int k_pairs = 16;
    std::vector<fj::promise<int>> promises(k_pairs);
    std::vector<fj::future<int>> waiters;
    for (int i = 0; i < k_pairs; ++i)
        waiters.push_back(
            sched.submit([f = promises[i].get_future()]() mutable { return f.get() * 2; }));
    std::vector<fj::future<void>> setters;
    for (int i = 0; i < k_pairs; ++i)
        setters.push_back(sched.submit([&promises, i] { promises[i].set_value(i); }));
    for (int i = 0; i < k_pairs; ++i)
        EXPECT_EQ(fj_test::get_or(waiters[i], -1), 2 * i);
    for (auto& s : setters)
        EXPECT_TRUE(fj_test::get_void(s));
}

// then() on a promise's future set by a plain thread runs on a pool (the default scheduler's),
// not on the setting thread.
TEST_P(promise_test, ContinuationOfAPromiseSetOutsideRunsOnAPool) {
    fj::promise<int> p;
    auto continued = p.get_future().then(
        [](int v) { return std::make_pair(v + 1, fj::detail::current_worker() != nullptr); });
    std::thread setter([&p] { p.set_value(1); });
    setter.join();
    const auto [value, on_worker] = continued.get();
    EXPECT_EQ(value, 2);
    EXPECT_TRUE(on_worker);
}

// fj::async(f, args...): arguments are decay-copied, move-only ones moved, the callable called
// as an rvalue; the same with a scheduler first.
TEST_P(promise_test, AsyncWithArguments) {
    fj::scheduler sched(workers());
    auto sum = fj::async(
        sched, [](int a, long b) { return a + b; }, 2, 40L);
    EXPECT_EQ(fj_test::get_or(sum, 0L), 42L);

    std::string text = "copied";
    // As with std::async, a parameter taking an lvalue reference does not compile (the copy is
    // passed as an rvalue): the task gets its own copy.
    auto copy = fj::async(
        sched,
        [](std::string s) {
            s += "!";
            return s;
        },
        text);
    EXPECT_EQ(copy.get(), "copied!");
    EXPECT_EQ(text, "copied"); // the task worked on its own copy

    auto moved = fj::async(
        sched, [](std::unique_ptr<int> p) { return *p + 1; }, std::make_unique<int>(1));
    EXPECT_EQ(moved.get(), 2);

    struct rvalue_only {
        int operator()(int x) && { return x * 3; }
    };
    EXPECT_EQ(fj::async(sched, rvalue_only{}, 5).get(), 15);

    auto on_default = fj::async([](int a, int b) { return a * b; }, 6, 7);
    EXPECT_EQ(on_default.get(), 42);

    auto fetch = fj::async(
        sched, [](const std::vector<int>& v, std::size_t i) { return v[i]; },
        std::vector<int>{4, 5, 6}, std::size_t{1});
    EXPECT_EQ(fetch.get(), 5);

    struct counter {
        int n;
        int add(int k) const { return n + k; }
    };
    EXPECT_EQ(fj::async(sched, &counter::add, counter{40}, 2).get(), 42); // a pointer to member

    int (*null_function)(int) = nullptr;
    EXPECT_THROW((void)fj::async(sched, null_function, 1), std::invalid_argument);
}

// std::async's launch policies: async (and the default async | deferred) run as tasks; deferred
// alone is refused before anything is queued.
TEST_P(promise_test, AsyncWithALaunchPolicy) {
    std::atomic<int> ran{0};
    auto a = fj::async(
        std::launch::async,
        [&ran](int k) {
            ran += k;
            return k;
        },
        1);
    auto b = fj::async(std::launch::async | std::launch::deferred, [&ran] {
        ran += 10;
        return 10;
    });
    EXPECT_EQ(a.get() + b.get(), 11);
    EXPECT_THROW((void)fj::async(std::launch::deferred, [&ran] { ran += 100; }),
                 std::invalid_argument);
    EXPECT_EQ(ran.load(), 11);
}

INSTANTIATE_TEST_SUITE_P(Workers, promise_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
