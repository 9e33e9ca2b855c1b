// Cancellation with std::stop_token: a stop request keeps unstarted chunks, callables and tasks
// from starting, the call ends with fj::operation_cancelled, a body's own exception outranks the
// request, and calls whose token is never stopped behave exactly as without one.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

namespace {

class cancellation_test : public fj_test::workers_test {
protected:
    fj::scheduler make_pool() const { return fj::scheduler(workers()); }
};

// Each index's run count: every test checks that no iteration ran twice.
struct run_counts {
    explicit run_counts(std::size_t n) : cells(n) {}
    void hit(std::size_t i) { cells[i].fetch_add(1, std::memory_order_relaxed); }
    std::size_t ran() const {
        std::size_t total = 0;
        for (const auto& c : cells)
            total += c.load(std::memory_order_relaxed) != 0;
        return total;
    }
    bool none_twice() const {
        for (const auto& c : cells)
            if (c.load(std::memory_order_relaxed) > 1)
                return false;
        return true;
    }
    std::vector<std::atomic<std::uint8_t>> cells;
};

TEST(operation_cancelled, is_the_base_of_task_cancelled) {
    fj::task_cancelled e("x");
    const fj::operation_cancelled& base = e;
    EXPECT_STREQ(base.what(), "x");
    static_assert(std::is_base_of_v<std::runtime_error, fj::operation_cancelled>);
}

TEST_P(cancellation_test, a_loop_whose_token_is_already_stopped_runs_nothing) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    source.request_stop();
    std::atomic<int> calls{0};
    EXPECT_THROW(fj::parallel_for(
                     pool, 0, 1000, [&](int) { calls.fetch_add(1); }, source.get_token()),
                 fj::operation_cancelled);
    EXPECT_THROW(fj::parallel_for(
                     pool, 0, 0, [&](int) { calls.fetch_add(1); }, source.get_token()),
                 fj::operation_cancelled); // stopped before the call: even an empty one
    EXPECT_THROW(fj::parallel_for(
                     pool, fj::blocked_range<int>{0, 100},
                     [&](fj::blocked_range<int>) { calls.fetch_add(1); }, source.get_token()),
                 fj::operation_cancelled);
    std::vector<int> v(100);
    EXPECT_THROW(fj::parallel_for_each(
                     pool, v.begin(), v.end(), [&](int&) { calls.fetch_add(1); }, fj::grain{4},
                     source.get_token()),
                 fj::operation_cancelled);
    EXPECT_THROW(
        fj::parallel_reduce(
            pool, 0, 100, 0, [&](int i) { return calls += i; }, std::plus<>{}, source.get_token()),
        fj::operation_cancelled);
    EXPECT_THROW(
        fj::parallel_invoke(
            pool, [&] { calls.fetch_add(1); }, [&] { calls.fetch_add(1); }, source.get_token()),
        fj::operation_cancelled);
    EXPECT_EQ(calls.load(), 0);
}

TEST_P(cancellation_test, a_loop_stopped_by_one_of_its_bodies_skips_the_rest) {
    fj::scheduler pool = make_pool();
    constexpr std::size_t n = 10'000'000;
    run_counts counts(n);
    std::stop_source source;
    std::atomic<bool> first{true};
    try {
        fj::parallel_for(
            pool, std::size_t{0}, n,
            [&](std::size_t i) {
                counts.hit(i);
                if (first.exchange(false, std::memory_order_relaxed))
                    source.request_stop(); // the stop callback runs here, on this worker
            },
            source.get_token());
        ADD_FAILURE() << "no fj::operation_cancelled";
    } catch (const fj::operation_cancelled& e) {
        EXPECT_NE(std::string(e.what()).find("fj::parallel_for"), std::string::npos) << e.what();
    }
    // Chunks start at one iteration and grow only while they are fast; each worker finishes the
    // one it was in. Far fewer than n ran.
    EXPECT_LT(counts.ran(), n / 2);
    EXPECT_TRUE(counts.none_twice());
}

TEST_P(cancellation_test, a_stop_requested_from_another_thread_ends_a_running_loop) {
    fj::scheduler pool = make_pool();
    constexpr std::size_t n = 1'000'000;
    run_counts counts(n);
    std::stop_source source;
    std::stop_token token = source.get_token();
    std::atomic<std::size_t> started{0};
    std::thread requester([&] {
        while (started.load() < 100)
            std::this_thread::yield();
        source.request_stop();
    });
    EXPECT_THROW(fj::parallel_for(
                     pool, std::size_t{0}, n,
                     [&](std::size_t i) {
                         counts.hit(i);
                         // After the first 100 bodies, each one waits for the request, so the
                         // loop cannot finish before it comes.
                         if (started.fetch_add(1) >= 100)
                             while (!token.stop_requested())
                                 std::this_thread::yield();
                     },
                     token),
                 fj::operation_cancelled);
    requester.join();
    const std::size_t ran = counts.ran();
    EXPECT_LT(ran, n);
    EXPECT_TRUE(counts.none_twice());
    // Nothing runs after the call has returned.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(counts.ran(), ran);
}

TEST_P(cancellation_test, a_bodys_exception_outranks_the_stop_request) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    EXPECT_THROW(fj::parallel_for(
                     pool, 0, 10'000,
                     [&](int i) {
                         if (i == 77) {
                             source.request_stop();
                             throw std::out_of_range("77");
                         }
                     },
                     fj::grain{16}, source.get_token()),
                 std::out_of_range);
    std::stop_source again;
    EXPECT_THROW(fj::parallel_reduce(
                     pool, 0, 10'000, 0L,
                     [&](int i) -> long {
                         if (i == 5000) {
                             again.request_stop();
                             throw std::out_of_range("5000");
                         }
                         return i;
                     },
                     std::plus<>{}, again.get_token()),
                 std::out_of_range);
}

TEST_P(cancellation_test, a_token_never_stopped_changes_nothing) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    const std::stop_token token = source.get_token();
    run_counts counts(100'003);
    fj::parallel_for(
        pool, 0, 100'003, [&](int i) { counts.hit(static_cast<std::size_t>(i)); }, token);
    EXPECT_EQ(counts.ran(), 100'003u);
    EXPECT_TRUE(counts.none_twice());
    const double with = fj::parallel_reduce(
        pool, 0, 100'003, 0.0, [](int i) { return 1.0 / (1.0 + i); }, std::plus<>{}, token);
    const double without = fj::parallel_reduce(
        pool, 0, 100'003, 0.0, [](int i) { return 1.0 / (1.0 + i); }, std::plus<>{});
    EXPECT_EQ(with, without); // the same tree: bit-identical
    std::atomic<int> calls{0};
    fj::parallel_invoke(
        pool, [&] { calls += 1; }, [&] { calls += 2; }, [&] { calls += 4; }, token);
    EXPECT_EQ(calls.load(), 7);
    // A token with no stop state at all, and one whose source is gone.
    fj::parallel_for(
        pool, 0, 10, [&](int) { calls += 1; }, std::stop_token{});
    std::stop_token orphan;
    {
        std::stop_source gone;
        orphan = gone.get_token();
    }
    fj::parallel_for(
        pool, 0, 10, [&](int) { calls += 1; }, orphan);
    EXPECT_EQ(calls.load(), 27);
}

TEST_P(cancellation_test, a_reduction_stopped_midway_returns_no_result) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<long> mapped{0};
    EXPECT_THROW(fj::parallel_reduce(
                     pool, 0L, 1'000'000L, 0L,
                     [&](long i) {
                         if (mapped.fetch_add(1) == 10)
                             source.request_stop();
                         return i;
                     },
                     std::plus<>{}, fj::grain{64}, source.get_token()),
                 fj::operation_cancelled);
    EXPECT_LT(mapped.load(), 1'000'000);
}

TEST_P(cancellation_test, scans_stop_on_their_token) {
    fj::scheduler pool = make_pool();
    const std::size_t n = 200'000;
    std::vector<long> in(n, 1), out(n, -1);

    std::stop_source before;
    before.request_stop();
    EXPECT_THROW(fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), before.get_token()),
                 fj::operation_cancelled);
    EXPECT_EQ(std::count(out.begin(), out.end(), -1), static_cast<long>(n)) << "nothing written";

    // Stopped by the operator itself, midway, with the token before the grain and after it.
    std::stop_source midway;
    std::atomic<long> applied{0};
    auto op = [&](long a, long b) {
        if (applied.fetch_add(1, std::memory_order_relaxed) == 5'000)
            midway.request_stop();
        return a + b;
    };
    EXPECT_THROW(fj::exclusive_scan(pool, in.begin(), in.end(), out.begin(), 0L, op,
                                    midway.get_token(), fj::grain{512}),
                 fj::operation_cancelled);
    EXPECT_LT(applied.load(), static_cast<long>(n)) << "a whole scan applies op about 2n times";

    std::stop_source body_stop;
    EXPECT_THROW(fj::parallel_scan(
                     pool, fj::blocked_range<std::size_t>(0, n, 1000), 0L,
                     [&](const fj::blocked_range<std::size_t>& r, long sum, bool) {
                         if (r.begin() >= n / 2)
                             body_stop.request_stop();
                         return sum + static_cast<long>(r.size());
                     },
                     std::plus<>{}, body_stop.get_token()),
                 fj::operation_cancelled);

    // A token never stopped: the whole result.
    std::stop_source never;
    fj::inclusive_scan(pool, in.begin(), in.end(), out.begin(), fj::grain{777}, never.get_token());
    EXPECT_EQ(out.back(), static_cast<long>(n));
    const long total = fj::parallel_scan(
        fj::blocked_range<std::size_t>(0, n), 0L,
        [&](const fj::blocked_range<std::size_t>& r, long sum, bool) {
            return sum + static_cast<long>(r.size());
        },
        std::plus<>{}, never.get_token());
    EXPECT_EQ(total, static_cast<long>(n));
}

TEST_P(cancellation_test, parallel_invoke_skips_the_callables_not_started) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<int> ran{0};
    EXPECT_THROW(fj_test::on_worker(pool,
                                    [&] {
                                        fj::parallel_invoke(
                                            pool,
                                            [&] {
                                                ran += 1;
                                                source.request_stop();
                                            },
                                            [&] { ran += 10; }, [&] { ran += 100; },
                                            source.get_token());
                                    }),
                 fj::operation_cancelled);
    EXPECT_GE(ran.load(), 1);
    // One worker runs the callables in order, so the first one's request stops the others.
    if (workers() == 1) {
        EXPECT_EQ(ran.load(), 1);
    }
}

TEST_P(cancellation_test, a_loop_stopped_inside_a_task_throws_through_its_future) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<long> started{0};
    auto f = pool.submit([&] {
        fj::parallel_for(
            0L, 100'000'000L,
            [&](long) {
                if (started.fetch_add(1) == 1000)
                    source.request_stop();
            },
            source.get_token());
    });
    EXPECT_THROW(f.get(), fj::operation_cancelled);
    EXPECT_LT(started.load(), 100'000'000L);
}

TEST_P(cancellation_test, a_group_with_a_stopped_token_runs_nothing_and_wait_throws) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    source.request_stop();
    fj::task_group group(pool, source.get_token());
    EXPECT_TRUE(group.is_canceling());
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i)
        group.run([&] { ran += 1; });
    EXPECT_THROW(group.wait(), fj::operation_cancelled);
    EXPECT_EQ(ran.load(), 0);
    // A stop is for good: the group stays cancelled after wait().
    EXPECT_TRUE(group.is_canceling());
    group.run([&] { ran += 1; });
    EXPECT_THROW(group.wait(), fj::operation_cancelled);
    EXPECT_EQ(ran.load(), 0);
}

TEST_P(cancellation_test, a_group_stopped_while_its_tasks_run) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    fj::task_group group(pool, source.get_token());
    constexpr std::size_t n = 20'000;
    run_counts counts(n);
    std::atomic<std::size_t> started{0};
    for (std::size_t i = 0; i < n; ++i)
        group.run([&, i] {
            counts.hit(i);
            if (started.fetch_add(1) == 50)
                source.request_stop();
        });
    EXPECT_THROW(group.wait(), fj::operation_cancelled);
    EXPECT_GE(counts.ran(), 51u);
    EXPECT_TRUE(counts.none_twice());
    const std::size_t ran = counts.ran();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(counts.ran(), ran); // nothing of the group runs after wait()
}

TEST_P(cancellation_test, a_groups_task_exception_outranks_its_stop) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    fj::task_group group(pool, source.get_token());
    group.run([&] {
        source.request_stop();
        throw std::out_of_range("task");
    });
    EXPECT_THROW(group.wait(), std::out_of_range);
    EXPECT_THROW(group.wait(), fj::operation_cancelled); // then the stop, for good
}

TEST_P(cancellation_test, a_group_without_a_token_keeps_its_cancel_semantics) {
    fj::scheduler pool = make_pool();
    fj::task_group group(pool);
    std::atomic<int> ran{0};
    group.cancel();
    group.run([&] { ran += 1; });
    group.wait(); // cancel() is not a stop request: wait() returns normally and ends it
    EXPECT_EQ(ran.load(), 0);
    group.run([&] { ran += 1; });
    group.wait();
    EXPECT_EQ(ran.load(), 1);
}

TEST_P(cancellation_test, async_with_a_stopped_token_skips_the_call) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<int> ran{0};
    auto before = fj::async(
        pool, source.get_token(), [&](int x) { return ran += x; }, 1);
    EXPECT_EQ(before.get(), 1);
    source.request_stop();
    auto after = fj::async(
        pool, source.get_token(), [&](int x) { return ran += x; }, 1);
    EXPECT_THROW(after.get(), fj::operation_cancelled);
    auto on_current = pool.submit([&] {
        auto inner = fj::async(source.get_token(), [&] { ran += 100; });
        inner.get();
    });
    EXPECT_THROW(on_current.get(), fj::operation_cancelled);
    EXPECT_EQ(ran.load(), 1);
}

TEST_P(cancellation_test, async_passes_the_token_to_a_callable_that_takes_one) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<bool> go{false};
    auto poller = fj::async(
        pool, source.get_token(),
        [&](std::stop_token token, int step) {
            long polls = 0;
            go.store(true);
            while (!token.stop_requested())
                polls += step;
            return polls >= 0;
        },
        1);
    while (!go.load())
        std::this_thread::yield();
    source.request_stop();
    EXPECT_TRUE(poller.get()); // started before the request: it ran and returned its value
}

INSTANTIATE_TEST_SUITE_P(workers, cancellation_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
