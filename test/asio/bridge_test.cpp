// <forkjoin/asio.hpp>: an asio::awaitable coroutine co_awaits forkjoin computations and resumes
// on its own executor; values and exceptions come out of the co_await; other completion tokens
// work too; the executor keeps outstanding work while a computation runs.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <forkjoin/asio.hpp>
#include <forkjoin/promise.hpp>
#include <forkjoin/task.hpp>

namespace {

namespace asio = boost::asio;

// Runs `make()`'s coroutine on a fresh single-threaded io_context on this thread until it ends;
// returns whether it ended (a rethrown exception fails the test).
template <class MakeCoroutine>
bool run_on_io_thread(MakeCoroutine make) {
    asio::io_context io(1);
    bool done = false;
    std::exception_ptr error;
    asio::co_spawn(io, make(), [&](std::exception_ptr e) {
        error = e;
        done = true;
    });
    io.run_for(fj_test::k_deadline);
    if (error)
        std::rethrow_exception(error);
    return done;
}

fj::task<long> fib(int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await fj::join(fib(n - 1), fib(n - 2));
    co_return a + b;
}

class asio_bridge : public fj_test::guarded_test {};

TEST_F(asio_bridge, values_come_out_of_the_co_await_on_the_io_thread) {
    fj::scheduler pool(2);
    const std::thread::id io_thread = std::this_thread::get_id();
    std::atomic<bool> computed_on_io_thread{false};
    std::vector<bool> resumed_on_io_thread;
    int value = 0, from_default = 0, from_future = 0, from_promise = 0;
    std::string shared_a, shared_b;
    long from_task = 0;
    bool void_ran = false;

    ASSERT_TRUE(run_on_io_thread([&]() -> asio::awaitable<void> {
        auto here = [&] {
            resumed_on_io_thread.push_back(std::this_thread::get_id() == io_thread);
        };
        value = co_await fj::asio::async_run(
            pool,
            [&] {
                computed_on_io_thread =
                    computed_on_io_thread || std::this_thread::get_id() == io_thread;
                return 42;
            },
            asio::use_awaitable);
        here();
        co_await fj::asio::async_run(
            pool, [&] { void_ran = true; }, asio::use_awaitable);
        here();
        from_default = co_await fj::asio::async_run([] { return 7; }, asio::use_awaitable);
        here();
        from_future =
            co_await fj::asio::async_wait(fj::async(pool, [] { return 8; }), asio::use_awaitable);
        here();
        fj::shared_future<std::string> shared =
            fj::async(pool, [] { return std::string("shared"); }).share();
        shared_a = co_await fj::asio::async_wait(shared, asio::use_awaitable);
        shared_b = co_await fj::asio::async_wait(shared, asio::use_awaitable);
        here();
        // Named, not a temporary inside the co_await expression: g++ 12 destroys such a
        // temporary twice when it owns memory (docs/asio.md#gcc-12).
        fj::task<long> task = fib(20);
        from_task = co_await fj::asio::async_run(pool, std::move(task), asio::use_awaitable);
        here();
        // A promise set by a thread outside every pool, most likely after the coroutine
        // suspended (the future is taken before that thread starts: the two calls must not
        // overlap).
        fj::promise<int> p;
        fj::future<int> promised = p.get_future();
        std::thread setter([&p] {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            p.set_value(9);
        });
        from_promise = co_await fj::asio::async_wait(std::move(promised), asio::use_awaitable);
        here();
        setter.join();
    }));

    EXPECT_EQ(value, 42);
    EXPECT_TRUE(void_ran);
    EXPECT_EQ(from_default, 7);
    EXPECT_EQ(from_future, 8);
    EXPECT_EQ(shared_a, "shared");
    EXPECT_EQ(shared_b, "shared");
    EXPECT_EQ(from_task, 6765);
    EXPECT_EQ(from_promise, 9);
    EXPECT_FALSE(computed_on_io_thread.load());
    EXPECT_EQ(resumed_on_io_thread, std::vector<bool>(7, true));
}

TEST_F(asio_bridge, exceptions_reach_the_co_await) {
    fj::scheduler pool(2);
    std::vector<std::string> caught;
    ASSERT_TRUE(run_on_io_thread([&]() -> asio::awaitable<void> {
        try {
            co_await fj::asio::async_run(
                pool, []() -> int { throw std::runtime_error("from an int computation"); },
                asio::use_awaitable);
            caught.push_back("nothing");
        } catch (const std::runtime_error& e) {
            caught.push_back(e.what());
        }
        try {
            co_await fj::asio::async_run(
                pool, [] { throw std::logic_error("from a void computation"); },
                asio::use_awaitable);
            caught.push_back("nothing");
        } catch (const std::logic_error& e) {
            caught.push_back(e.what());
        }
        try {
            fj::promise<std::string> p;
            fj::future<std::string> f = p.get_future();
            p.set_exception(std::make_exception_ptr(std::out_of_range("from a promise")));
            co_await fj::asio::async_wait(std::move(f), asio::use_awaitable);
            caught.push_back("nothing");
        } catch (const std::out_of_range& e) {
            caught.push_back(e.what());
        }
        try {
            co_await fj::asio::async_wait(fj::future<int>(), asio::use_awaitable);
            caught.push_back("nothing");
        } catch (const std::future_error& e) {
            caught.push_back(e.code() == std::future_errc::no_state ? "no_state" : "other");
        }
        // The coroutine goes on after the exceptions, and the next computation works.
        const int v = co_await fj::asio::async_run(
            pool, [] { return 1; }, asio::use_awaitable);
        caught.push_back(std::to_string(v));
    }));
    EXPECT_EQ(caught,
              (std::vector<std::string>{"from an int computation", "from a void computation",
                                        "from a promise", "no_state", "1"}));
}

TEST_F(asio_bridge, a_callback_bound_to_the_io_context_runs_on_its_thread) {
    fj::scheduler pool(2);
    asio::io_context io(1);
    const std::thread::id io_thread = std::this_thread::get_id();
    std::optional<int> value;
    std::exception_ptr error;
    bool on_io_thread = false;
    fj::asio::async_run(
        pool, [] { return 5; }, asio::bind_executor(io, [&](std::exception_ptr e, int v) {
            error = e;
            value = v;
            on_io_thread = std::this_thread::get_id() == io_thread;
        }));
    EXPECT_FALSE(value.has_value()) << "the handler ran inside the initiating call";
    io.run_for(fj_test::k_deadline);
    EXPECT_EQ(value.value_or(-1), 5);
    EXPECT_FALSE(error);
    EXPECT_TRUE(on_io_thread);
}

TEST_F(asio_bridge, use_future_gives_the_value_and_the_exception) {
    fj::scheduler pool(2);
    std::future<int> ok = fj::asio::async_run(
        pool, [] { return 3; }, asio::use_future);
    std::future<int> bad = fj::asio::async_run(
        pool, []() -> int { throw std::runtime_error("use_future"); }, asio::use_future);
    ASSERT_EQ(ok.wait_for(fj_test::k_deadline), std::future_status::ready);
    ASSERT_EQ(bad.wait_for(fj_test::k_deadline), std::future_status::ready);
    EXPECT_EQ(ok.get(), 3);
    EXPECT_THROW(bad.get(), std::runtime_error);
}

// Nothing but the computation is pending on the io_context: run() returns only after its handler
// ran, because the executor has outstanding work until then.
TEST_F(asio_bridge, run_does_not_return_while_a_computation_is_pending) {
    fj::scheduler pool(2);
    asio::io_context io(1);
    bool handled = false;
    fj::asio::async_run(
        pool,
        [] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            return 1;
        },
        asio::bind_executor(io, [&](std::exception_ptr, int) { handled = true; }));
    io.run_for(fj_test::k_deadline);
    EXPECT_TRUE(handled);
}

// The computation starts when the operation is initiated, which for use_awaitable is the
// co_await: an awaitable made and never awaited runs nothing.
TEST_F(asio_bridge, use_awaitable_starts_the_computation_at_the_co_await) {
    fj::scheduler pool(2);
    std::atomic<int> runs{0};
    ASSERT_TRUE(run_on_io_thread([&]() -> asio::awaitable<void> {
        {
            auto never_awaited = fj::asio::async_run(
                pool, [&] { runs.fetch_add(1); }, asio::use_awaitable);
        }
        auto awaited = fj::asio::async_run(
            pool, [&] { return runs.fetch_add(1); }, asio::use_awaitable);
        const int seen = co_await std::move(awaited);
        EXPECT_EQ(seen, 0);
    }));
    EXPECT_EQ(runs.load(), 1);
}

// Many coroutines on one I/O thread, each awaiting several computations: every one resumed once,
// with its own value.
TEST_F(asio_bridge, many_coroutines_each_resumed_once_with_their_values) {
    fj::scheduler pool(2);
    constexpr int coroutines = 200, steps = 5;
    asio::io_context io(1);
    std::vector<long> sums(coroutines, 0);
    int finished = 0;
    for (int c = 0; c < coroutines; ++c)
        asio::co_spawn(
            io,
            [&, c]() -> asio::awaitable<void> {
                for (int s = 0; s < steps; ++s)
                    sums[static_cast<std::size_t>(c)] += co_await fj::asio::async_run(
                        pool, [c, s] { return static_cast<long>(c * 10 + s); },
                        asio::use_awaitable);
                ++finished;
            },
            asio::detached);
    io.run_for(fj_test::k_deadline);
    ASSERT_EQ(finished, coroutines);
    for (int c = 0; c < coroutines; ++c)
        EXPECT_EQ(sums[static_cast<std::size_t>(c)], static_cast<long>(c * 10 * steps + 10));
}

} // namespace
