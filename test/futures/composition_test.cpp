// Future composition: then, when_all, when_any, cancel. Values, void, move-only results,
// exceptions and cancellation flow through; nothing blocks a worker; racing completions lose no
// wake-up and leave the inputs usable; continuations created during shutdown still run.
#include "support.hpp"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using fj_test::get_or;
using fj_test::scaled;
using fj_test::spin_until;

class composition_test : public fj_test::workers_test {};

// A task that holds its worker until released: makes "not started yet" and "not finished yet"
// states that tests can rely on.
struct gate {
    std::atomic<bool> open{false};
    void wait() const {
        EXPECT_TRUE(spin_until([&] { return open.load(); }));
    }
};

TEST_P(composition_test, then_chains_values_void_and_move_only_results) {
    fj::scheduler pool(workers());
    auto doubled = pool.submit([] { return 21; }).then([](int x) { return 2 * x; });
    EXPECT_EQ(get_or(doubled, -1), 42);

    auto chain = pool.submit([] { return std::string("a"); })
                     .then([](std::string s) { return s + "b"; })
                     .then([](std::string s) { return s + "c"; })
                     .then([](const std::string& s) { return s.size(); });
    EXPECT_EQ(get_or(chain, std::size_t{0}), 3u);

    std::atomic<int> side{0};
    auto from_void = pool.submit([&] { side = 1; }).then([&] { return side.load() + 1; });
    EXPECT_EQ(get_or(from_void, -1), 2);
    auto to_void = pool.submit([] { return 5; }).then([&](int x) { side = x; });
    ASSERT_TRUE(fj_test::get_void(to_void));
    EXPECT_EQ(side.load(), 5);

    auto moved =
        pool.submit([] { return std::make_unique<int>(7); }).then([](std::unique_ptr<int> p) {
            return *p + 1;
        });
    EXPECT_EQ(get_or(moved, -1), 8);
}

TEST_P(composition_test, then_on_a_ready_future_and_from_inside_tasks) {
    fj::scheduler pool(workers());
    auto ready = pool.submit([] { return 1; });
    ready.wait();
    auto next = ready.then([](int x) { return x + 1; });
    EXPECT_FALSE(ready.valid()); // consumed
    EXPECT_EQ(get_or(next, -1), 2);

    // Inside a task: the continuation runs on the same pool (current scheduler inside it).
    auto outer = pool.submit([&pool] {
        auto inner = fj::async([] { return 10; }).then([&pool](int x) {
            return (&fj::current_scheduler() == &pool) ? x + 1 : -1;
        });
        return inner.get();
    });
    EXPECT_EQ(get_or(outer, -1), 11);
}

TEST_P(composition_test, an_exception_skips_the_continuation_and_propagates) {
    fj::scheduler pool(workers());
    std::atomic<int> called{0};
    auto f = pool.submit([]() -> int { throw std::runtime_error("first"); })
                 .then([&](int x) {
                     ++called;
                     return x;
                 })
                 .then([&](int x) {
                     ++called;
                     return x;
                 });
    ASSERT_TRUE(fj_test::wait_ready(f));
    EXPECT_THROW(
        {
            try {
                f.get();
            } catch (const std::runtime_error& e) {
                EXPECT_STREQ(e.what(), "first");
                throw;
            }
        },
        std::runtime_error);
    EXPECT_EQ(called.load(), 0);
    // An exception from the continuation itself.
    auto g = pool.submit([] { return 1; }).then([](int) -> int { throw std::logic_error("then"); });
    ASSERT_TRUE(fj_test::wait_ready(g));
    EXPECT_THROW(g.get(), std::logic_error);
}

TEST_P(composition_test, then_does_not_wait_for_the_antecedent) {
    fj::scheduler pool(workers());
    gate g;
    auto slow = pool.submit([&] {
        g.wait();
        return 1;
    });
    auto next = slow.then([](int x) { return x + 1; }); // returns at once
    EXPECT_FALSE(next.is_ready());
    g.open = true;
    EXPECT_EQ(get_or(next, -1), 2);
}

TEST(composition_bad_input, empty_futures_and_null_callables) {
    fj::future<int> empty;
    EXPECT_THROW((void)empty.then([](int x) { return x; }), std::future_error);
    EXPECT_THROW((void)empty.cancel(), std::future_error);
    int (*null_fn)(int) = nullptr;
    auto f = fj::async([] { return 1; });
    EXPECT_THROW((void)f.then(null_fn), std::invalid_argument);
    std::vector<fj::future<int>> with_empty;
    with_empty.push_back(fj::async([] { return 1; }));
    with_empty.emplace_back();
    EXPECT_THROW((void)fj::when_all(std::move(with_empty)), std::invalid_argument);
    EXPECT_THROW((void)fj::when_any(fj::future<int>{}), std::invalid_argument);
}

TEST_P(composition_test, cancel_stops_a_task_that_has_not_started) {
    fj::scheduler pool(workers());
    std::atomic<bool> release{false};
    auto blockers = fj_test::occupy_workers(pool, release);
    std::atomic<int> ran{0};
    auto victim = pool.submit([&] {
        ++ran;
        return 1;
    });
    auto dropped = pool.submit([&] { ++ran; });
    auto chained = pool.submit([&] {
        ++ran;
        return 2;
    });
    EXPECT_TRUE(victim.cancel());
    EXPECT_FALSE(victim.cancel()); // already cancelled
    EXPECT_TRUE(victim.is_ready());
    EXPECT_EQ(victim.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_TRUE(dropped.cancel());
    dropped = {}; // dropped after cancelling: must still never run
    EXPECT_TRUE(chained.cancel());
    auto after = chained.then([](int x) { return x; });
    EXPECT_THROW(victim.get(), fj::task_cancelled);
    EXPECT_FALSE(victim.valid());
    ASSERT_TRUE(fj_test::wait_ready(after));
    EXPECT_THROW(after.get(), fj::task_cancelled);

    release = true;
    for (auto& b : blockers)
        ASSERT_TRUE(fj_test::get_void(b));
    pool.shutdown(); // every queued task has been taken (and skipped) by now
    EXPECT_EQ(ran.load(), 0);
}

TEST_P(composition_test, cancel_fails_once_the_task_started_or_finished) {
    fj::scheduler pool(workers());
    gate g;
    std::atomic<bool> started{false};
    auto running = pool.submit([&] {
        started = true;
        g.wait();
        return 3;
    });
    ASSERT_TRUE(spin_until([&] { return started.load(); }));
    EXPECT_FALSE(running.cancel());
    g.open = true;
    EXPECT_EQ(get_or(running, -1), 3);

    auto done = pool.submit([] { return 4; });
    done.wait();
    EXPECT_FALSE(done.cancel());
    EXPECT_EQ(done.get(), 4);
}

TEST_P(composition_test, cancel_races_with_start_exactly_one_wins) {
    std::atomic<std::size_t> total_runs{0}; // outlives the pool: a skipped task never touches it
    std::size_t not_cancelled = 0;
    fj::scheduler pool(workers());
    for (std::size_t round = 0; round < scaled(20000); ++round) {
        std::atomic<int> ran{0};
        auto f = pool.submit([&] {
            ++ran;
            ++total_runs;
            return 1;
        });
        const bool cancelled = f.cancel();
        if (cancelled) {
            EXPECT_THROW(f.get(), fj::task_cancelled);
        } else {
            ++not_cancelled;
            EXPECT_EQ(get_or(f, -1), 1);
        }
        ASSERT_TRUE(spin_until([&] { return cancelled || ran.load() == 1; }));
        if (cancelled) {
            // It must never run: give it a moment to be taken from the queue and skipped.
            ASSERT_EQ(ran.load(), 0) << "round " << round;
        }
    }
    // Every queued task has been run or skipped by now: exactly the uncancelled ones ran.
    pool.shutdown();
    EXPECT_EQ(total_runs.load(), not_cancelled);
}

TEST_P(composition_test, when_all_collects_every_input) {
    fj::scheduler pool(workers());
    std::vector<fj::future<int>> parts;
    for (int i = 0; i < 100; ++i)
        parts.push_back(pool.submit([i] {
            if (i == 13)
                throw std::runtime_error("thirteen");
            return i;
        }));
    auto all = fj::when_all(std::move(parts));
    ASSERT_TRUE(fj_test::wait_ready(all));
    std::vector<fj::future<int>> done = all.get();
    ASSERT_EQ(done.size(), 100u);
    for (int i = 0; i < 100; ++i) {
        ASSERT_TRUE(done[i].is_ready());
        if (i == 13)
            EXPECT_THROW(done[i].get(), std::runtime_error);
        else
            EXPECT_EQ(done[i].get(), i);
    }

    auto none = fj::when_all(std::vector<fj::future<int>>{});
    EXPECT_TRUE(none.is_ready());
    EXPECT_TRUE(none.get().empty());

    std::atomic<int> side{0};
    auto mixed = fj::when_all(pool.submit([] { return 1; }), pool.submit([&] { side = 2; }),
                              pool.submit([] { return std::string("three"); }));
    auto [one, two, three] = get_or(mixed, {});
    EXPECT_EQ(one.get(), 1);
    two.get();
    EXPECT_EQ(side.load(), 2);
    EXPECT_EQ(three.get(), "three");

    // Composes with then: the sum of all parts.
    std::vector<fj::future<int>> more;
    for (int i = 1; i <= 10; ++i)
        more.push_back(pool.submit([i] { return i; }));
    auto sum = fj::when_all(std::move(more)).then([](std::vector<fj::future<int>> fs) {
        int s = 0;
        for (auto& f : fs)
            s += f.get();
        return s;
    });
    EXPECT_EQ(get_or(sum, -1), 55);
}

TEST_P(composition_test, when_any_reports_the_first_and_leaves_the_others_usable) {
    fj::scheduler pool(workers() < 2 ? 2 : workers()); // one input blocks a worker
    gate g;
    std::vector<fj::future<int>> inputs;
    inputs.push_back(pool.submit([&] {
        g.wait();
        return 0;
    }));
    inputs.push_back(pool.submit([] { return 1; }));
    auto any = fj::when_any(std::move(inputs));
    ASSERT_TRUE(fj_test::wait_ready(any));
    auto result = any.get();
    EXPECT_EQ(result.index, 1u);
    EXPECT_EQ(result.futures[1].get(), 1);
    EXPECT_FALSE(result.futures[0].is_ready());
    g.open = true;
    EXPECT_EQ(get_or(result.futures[0], -1), 0); // no stale waiter left on it

    auto none = fj::when_any(std::vector<fj::future<int>>{}).get();
    EXPECT_EQ(none.index, static_cast<std::size_t>(-1));

    auto ready_a = pool.submit([] { return 'a'; });
    ready_a.wait();
    auto tuple_any = fj::when_any(std::move(ready_a), pool.submit([] {}));
    auto r = get_or(tuple_any, {});
    EXPECT_LE(r.index, 1u);
    EXPECT_EQ(std::get<0>(r.futures).get(), 'a');
    std::get<1>(r.futures).get();
}

// A throwing input is "ready" like any other: when_any itself does not throw, it reports that input
// first, and its exception reaches whoever calls get() on it; the other input is untouched.
TEST_P(composition_test, when_any_with_a_throwing_input_reports_it_and_keeps_the_exception) {
    fj::scheduler pool(workers() < 2 ? 2 : workers()); // one input blocks a worker
    gate g;
    std::vector<fj::future<int>> inputs;
    inputs.push_back(pool.submit([&] {
        g.wait();
        return 7;
    }));
    inputs.push_back(pool.submit([]() -> int { throw std::runtime_error("input 1 failed"); }));
    auto any = fj::when_any(std::move(inputs));
    ASSERT_TRUE(fj_test::wait_ready(any));
    auto result = any.get(); // does not throw: the combinator only reports readiness
    EXPECT_EQ(result.index, 1u);
    try {
        (void)result.futures[1].get();
        ADD_FAILURE() << "the failed input's get() did not throw";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "input 1 failed");
    }
    g.open = true;
    EXPECT_EQ(get_or(result.futures[0], -1), 7);

    // Variadic form, both inputs throwing: each keeps its own exception.
    auto a = pool.submit([]() -> int { throw std::logic_error("a"); });
    a.wait();
    auto both = fj::when_any(std::move(a), pool.submit([] { throw std::runtime_error("b"); }));
    auto r = get_or(both, {});
    EXPECT_LE(r.index, 1u); // either may be reported: both are ready (or about to be)
    EXPECT_THROW(std::get<0>(r.futures).get(), std::logic_error);
    EXPECT_THROW(std::get<1>(r.futures).get(), std::runtime_error);
}

// Inputs completing while the combinators register on them, on every worker: no lost wake-up, no
// stale waiter, no leak (ASan) and no race (TSan).
TEST_P(composition_test, racing_completions_stress) {
    fj::scheduler pool(workers());
    for (std::size_t round = 0; round < scaled(2000); ++round) {
        const int n = 1 + static_cast<int>(round % 5);
        std::vector<fj::future<int>> a, b;
        for (int i = 0; i < n; ++i) {
            a.push_back(pool.submit([i] { return i; }));
            b.push_back(pool.submit([i] { return i; }));
        }
        auto all = fj::when_all(std::move(a));
        auto any = fj::when_any(std::move(b));
        if (round % 3 == 0) {
            any = {}; // dropped before it fires: the inputs still complete and are freed
        } else {
            auto first = get_or(any, {});
            ASSERT_LT(first.index, static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i)
                ASSERT_EQ(first.futures[static_cast<std::size_t>(i)].get(), i);
        }
        auto parts = get_or(all, {});
        ASSERT_EQ(parts.size(), static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i)
            ASSERT_EQ(parts[static_cast<std::size_t>(i)].get(), i);
    }
}

// Where a continuation runs must not depend on whether the antecedent won the race with then():
// a ready antecedent's continuation goes to the antecedent's pool too, so that pool's shutdown()
// waits for it. (It used to go to the default scheduler, and outlive the pool: found by CI.)
TEST_P(composition_test, continuations_created_during_shutdown_still_run) {
    for (int round = 0; round < 20; ++round) {
        std::atomic<int> ran{0};
        {
            fj::scheduler pool(workers());
            for (int i = 0; i < 200; ++i) {
                auto antecedent = pool.submit([] { return 1; });
                if (i % 2 == 0)
                    antecedent.wait(); // the other order of the race: ready before then()
                auto f = std::move(antecedent).then([&](int x) {
                    if (&fj::current_scheduler() == &pool)
                        ran += x;
                });
                (void)f; // dropped: must still run
            }
            pool.shutdown();
            EXPECT_EQ(ran.load(), 200); // all ran, on the pool, before shutdown() returned
        }
        ASSERT_EQ(ran.load(), 200);
    }
}

TEST_P(composition_test, then_on_a_ready_future_runs_on_the_antecedents_pool_from_anywhere) {
    fj::scheduler pool(workers());
    fj::scheduler other(1);
    auto on_pool = [&pool] { return &fj::current_scheduler() == &pool; };

    auto ready = pool.submit([] { return 1; });
    ready.wait();
    auto from_outside = ready.then([&](int) { return on_pool(); });
    EXPECT_TRUE(get_or(from_outside, false)) << "from outside";

    // From a task of another pool: still the antecedent's pool.
    auto from_other = other.submit([&] {
        auto r = pool.submit([] { return 1; });
        r.wait();
        return r.then([&](int) { return on_pool(); }).get();
    });
    EXPECT_TRUE(get_or(from_other, false)) << "from another pool's task";
}

TEST(composition_home, then_on_a_ready_future_whose_pool_is_gone_runs_on_the_current_scheduler) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::future<int> orphan;
    fj::future<int> closed_pool_result;
    fj::scheduler closed_pool(1);
    {
        fj::scheduler gone(1);
        orphan = gone.submit([] { return 5; });
        orphan.wait();
    }
    closed_pool_result = closed_pool.submit([] { return 6; });
    closed_pool_result.wait();
    closed_pool.shutdown();

    auto on_default = [] { return &fj::current_scheduler() == &fj::default_scheduler(); };
    auto a = orphan.then([&](int x) { return on_default() ? x : -1; });
    auto b = closed_pool_result.then([&](int x) { return on_default() ? x : -1; });
    EXPECT_EQ(get_or(a, 0), 5);
    EXPECT_EQ(get_or(b, 0), 6);
}

INSTANTIATE_TEST_SUITE_P(workers, composition_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
