// co_await on fj::future and fj::shared_future from a coroutine type that is not forkjoin's: a
// ready future does not suspend; a pending one resumes where the future completes; values,
// exceptions and cancellation come out of the co_await as out of get().
#include "support.hpp"

#include <atomic>
#include <coroutine>
#include <exception>
#include <future>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <forkjoin/await.hpp>
#include <forkjoin/promise.hpp>
#include <forkjoin/when_all.hpp>

namespace {

// An eager coroutine that reports its result through a std::promise: the kind of coroutine type
// a program brings along (nothing of forkjoin's).
template <class T>
struct reporting {
    struct promise_type {
        std::promise<T> result;
        reporting get_return_object() { return {result.get_future()}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        template <class U>
        void return_value(U&& v) {
            result.set_value(std::forward<U>(v));
        }
        void unhandled_exception() { result.set_exception(std::current_exception()); }
    };
    std::future<T> result;
};

template <class T>
T result_of(reporting<T>& r) {
    if (r.result.wait_for(fj_test::k_deadline) != std::future_status::ready) {
        ADD_FAILURE() << "the coroutine did not finish (lost resumption)";
        return T{};
    }
    return r.result.get();
}

reporting<int> add_one(fj::future<int> f, std::atomic<bool>* suspended_once) {
    const std::thread::id before = std::this_thread::get_id();
    const int v = co_await std::move(f);
    if (suspended_once != nullptr)
        suspended_once->store(std::this_thread::get_id() != before);
    co_return v + 1;
}

TEST(co_await_future, a_ready_future_does_not_suspend) {
    fj::scheduler pool(2);
    fj::future<int> f = pool.submit([] { return 41; });
    f.wait();
    std::atomic<bool> moved{true};
    reporting<int> r = add_one(std::move(f), &moved);
    // Eager and never suspended: finished before add_one returned, on this thread.
    ASSERT_EQ(r.result.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(r.result.get(), 42);
    EXPECT_FALSE(moved.load());
}

TEST(co_await_future, a_pending_future_resumes_the_coroutine_on_the_pool_that_completes_it) {
    fj::scheduler pool(2);
    fj::promise<int> gate;
    fj::future<int> f = pool.submit([g = gate.get_future()]() mutable { return g.get() * 2; });
    std::atomic<std::size_t> resumed_on{fj::not_a_worker};
    auto coroutine = [&](fj::future<int> input) -> reporting<int> {
        const int v = co_await input;
        resumed_on.store(fj::current_worker_index());
        co_return v;
    };
    reporting<int> r = coroutine(std::move(f));
    EXPECT_EQ(r.result.wait_for(std::chrono::milliseconds(1)), std::future_status::timeout);
    gate.set_value(21);
    EXPECT_EQ(result_of(r), 42);
    EXPECT_LT(resumed_on.load(), pool.worker_count()); // one of the pool's workers
}

TEST(co_await_future, exceptions_and_cancellation_come_out_of_the_co_await) {
    fj::scheduler pool(1);
    auto rethrow = [](fj::future<int> f) -> reporting<int> { co_return co_await std::move(f); };
    reporting<int> failed = rethrow(pool.submit([]() -> int { throw std::runtime_error("boom"); }));
    EXPECT_THROW(result_of(failed), std::runtime_error);

    // The blocker parks on its future once it runs, and the worker may then start `queued`
    // before the cancel (a preempted test thread): a new pair until a cancel wins.
    bool cancelled_one = false;
    for (int attempt = 0; attempt < 100 && !cancelled_one; ++attempt) {
        fj::promise<void> hold;
        fj::future<void> blocker = pool.submit([h = hold.get_future()]() mutable { h.get(); });
        fj::future<int> queued = pool.submit([] { return 1; }); // behind the blocker
        cancelled_one = queued.cancel();
        if (cancelled_one) {
            reporting<int> cancelled = rethrow(std::move(queued));
            EXPECT_THROW(result_of(cancelled), fj::task_cancelled);
        }
        hold.set_value();
        EXPECT_TRUE(fj_test::get_void(blocker));
    }
    EXPECT_TRUE(cancelled_one);

    reporting<int> empty = rethrow(fj::future<int>());
    EXPECT_THROW(result_of(empty), std::future_error);
}

TEST(co_await_future, when_all_results_and_shared_futures_are_awaitable) {
    fj::scheduler pool(2);
    auto sum_both = [&]() -> reporting<int> {
        auto [a, b] =
            co_await fj::when_all(pool.submit([] { return 1; }), pool.submit([] { return 2; }));
        co_return a.get() + b.get();
    };
    reporting<int> both = sum_both();
    EXPECT_EQ(result_of(both), 3);

    fj::promise<int> source;
    fj::shared_future<int> shared = source.get_future().share();
    auto read = [](fj::shared_future<int> s) -> reporting<int> { co_return co_await s; };
    std::vector<reporting<int>> readers;
    for (int i = 0; i < 8; ++i)
        readers.push_back(read(shared));
    source.set_value(7); // from this thread, outside every pool: resumed on the default scheduler
    for (auto& r : readers)
        EXPECT_EQ(result_of(r), 7);
}

// Many coroutines awaiting many tasks at once: each resumed exactly once.
TEST(co_await_future, many_coroutines_each_resume_once) {
    fj::scheduler pool(2);
    std::atomic<int> resumed{0};
    auto await_one = [&](fj::future<int> f) -> reporting<int> {
        const int v = co_await std::move(f);
        resumed.fetch_add(1);
        co_return v;
    };
    const int n = static_cast<int>(fj_test::scaled(2'000));
    std::vector<reporting<int>> all;
    for (int i = 0; i < n; ++i)
        all.push_back(await_one(pool.submit([i] { return i; })));
    long sum = 0;
    for (auto& r : all)
        sum += result_of(r);
    EXPECT_EQ(sum, static_cast<long>(n) * (n - 1) / 2);
    EXPECT_EQ(resumed.load(), n);
}

} // namespace
