// A blocking call made outside every pool runs its root on the calling thread, which works as one
// of the pool's threads until the call returns (docs/design/callers.md): where the root runs, the
// caller's index, nesting, many callers at once, failures and stops, shutdown racing callers, a
// worker of another pool calling in, and the tasks a call leaves behind.
#include "support.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <latch>
#include <numeric>
#include <optional>
#include <semaphore>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using fj_test::workers_test;

std::int64_t fib(fj::scheduler& s, int n) {
    if (n < 2)
        return n;
    auto [a, b] = s.join([&] { return fib(s, n - 1); }, [&] { return fib(s, n - 2); });
    return a + b;
}

std::size_t caller_slots_in(const fj::scheduler_stats& stats) {
    std::size_t n = 0;
    for (const fj::worker_stats& w : stats.workers)
        n += w.caller ? 1 : 0;
    return n;
}

class caller_test : public workers_test {};

TEST_P(caller_test, the_root_runs_on_the_calling_thread) {
    fj::scheduler pool(workers());
    const std::thread::id me = std::this_thread::get_id();
    std::thread::id first_branch;
    pool.join([&] { first_branch = std::this_thread::get_id(); }, [] {});
    EXPECT_EQ(first_branch, me);
    EXPECT_EQ(pool.execute([] { return std::this_thread::get_id(); }), me);
    EXPECT_TRUE(pool.execute([&pool] { return pool.on_worker_thread(); }));
    EXPECT_EQ(&pool.execute([]() -> fj::scheduler& { return fj::current_scheduler(); }), &pool);
    EXPECT_FALSE(pool.on_worker_thread()); // the call is over
    EXPECT_EQ(fib(pool, 20), 6765);
    // One slot, taken again by every call.
    EXPECT_EQ(caller_slots_in(pool.stats()), 1u);
}

TEST_P(caller_test, a_caller_has_one_index_for_its_call_below_the_limit) {
    fj::scheduler pool(workers());
    EXPECT_EQ(fj::current_worker_index(), fj::not_a_worker);
    const auto [outer, inner] = pool.execute([&pool] {
        const std::size_t at_root = fj::current_worker_index();
        std::size_t in_branch = fj::not_a_worker;
        pool.join([&] { in_branch = fj::current_worker_index(); }, [] {});
        return std::pair{at_root, in_branch};
    });
    EXPECT_EQ(outer, inner); // the first branch of a join runs where the join was called
    EXPECT_GE(outer, pool.worker_count());
    EXPECT_LT(outer, pool.worker_index_limit());
    EXPECT_EQ(fj::current_worker_index(), fj::not_a_worker);
}

TEST_P(caller_test, with_no_caller_slots_the_root_is_queued_for_a_worker) {
    fj::scheduler_options options;
    options.workers = workers();
    options.max_callers = 0;
    fj::scheduler pool(options);
    EXPECT_NE(pool.execute([] { return std::this_thread::get_id(); }), std::this_thread::get_id());
    EXPECT_EQ(fib(pool, 18), 2584);
    EXPECT_EQ(caller_slots_in(pool.stats()), 0u);
}

TEST_P(caller_test, calls_nest_inside_a_call) {
    fj::scheduler pool(workers());
    std::vector<int> v(10'000);
    const long total = pool.execute([&] {
        fj::parallel_for(0, static_cast<int>(v.size()), [&](int i) { v[i] = i % 7; });
        return pool.execute([&] {
            return fj::parallel_reduce(
                0, static_cast<int>(v.size()), 0L, [&](int i) { return static_cast<long>(v[i]); },
                std::plus<>{});
        });
    });
    long expected = 0;
    for (int i = 0; i < static_cast<int>(v.size()); ++i)
        expected += i % 7;
    EXPECT_EQ(total, expected);
}

TEST_P(caller_test, many_outside_threads_call_at_once) {
    fj::scheduler_options options;
    options.workers = workers();
    options.max_callers = 3; // fewer slots than callers: the others queue their roots
    fj::scheduler pool(options);
    constexpr int k_threads = 6;
    const int rounds = fj_test::k_sanitized ? 20 : 100;
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < k_threads; ++t)
        threads.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                if (fib(pool, 12 + (t + r) % 4) !=
                    std::vector<int>{144, 233, 377, 610}[(t + r) % 4])
                    wrong.fetch_add(1);
                const long sum = fj::parallel_reduce(
                    pool, 0, 1000, 0L, [](int i) { return static_cast<long>(i); }, std::plus<>{});
                if (sum != 999L * 1000 / 2)
                    wrong.fetch_add(1);
            }
        });
    for (std::thread& th : threads)
        th.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_LE(caller_slots_in(pool.stats()), 3u);
}

TEST_P(caller_test, a_failing_call_throws_to_the_caller_and_frees_its_slot) {
    fj::scheduler pool(workers());
    for (int i = 0; i < 3; ++i) {
        EXPECT_THROW(
            pool.execute([&pool] { pool.join([] {}, [] { throw std::runtime_error("branch"); }); }),
            std::runtime_error);
        EXPECT_THROW(fj::parallel_for(pool, 0, 1000,
                                      [](int k) {
                                          if (k == 500)
                                              throw std::logic_error("body");
                                      }),
                     std::logic_error);
    }
    EXPECT_EQ(pool.execute([] { return std::this_thread::get_id(); }), std::this_thread::get_id());
    EXPECT_EQ(caller_slots_in(pool.stats()), 1u);
}

TEST_P(caller_test, a_stopped_call_throws_operation_cancelled) {
    fj::scheduler pool(workers());
    std::stop_source stop;
    std::atomic<int> ran{0};
    EXPECT_THROW(fj::parallel_for(
                     pool, 0, 100'000,
                     [&](int) {
                         if (ran.fetch_add(1) == 100)
                             stop.request_stop();
                     },
                     stop.get_token()),
                 fj::operation_cancelled);
    EXPECT_LT(ran.load(), 100'000);
    EXPECT_EQ(pool.execute([] { return 5; }), 5);
}

// A stolen branch: the caller waits for a thief, helping and then blocking, and gets its result.
TEST_P(caller_test, a_caller_waits_for_a_stolen_branch) {
    if (workers() < 2)
        GTEST_SKIP() << "needs a thief";
    fj::scheduler pool(workers());
    for (int i = 0; i < 20; ++i) {
        std::atomic<bool> b_started{false};
        const auto [a, b] = pool.join(
            [&] {
                fj_test::spin_until([&] { return b_started.load(); }, std::chrono::seconds(5));
                return 1;
            },
            [&] {
                b_started.store(true);
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                return 2;
            });
        EXPECT_EQ(a + b, 3);
    }
}

// A caller that blocks in the kernel on what its own fork does: a caller's push may wake nobody
// (the caller holds one of the pool's places; on a pool of one worker, the only one), so the
// task is taken by a sleeper's backstop look. The first call makes the slot and the worker goes
// back to sleep before the second blocks.
TEST_P(caller_test, a_caller_blocked_in_the_kernel_on_its_own_fork_is_not_left_waiting) {
    fj::scheduler pool(workers());
    pool.execute([] {});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const bool counted_down = pool.execute([] {
        std::latch done(1);
        fj::future<void> f = fj::fork([&done] { done.count_down(); });
        done.wait(); // a std::latch: the caller's thread blocks, nothing of the pool runs on it
        f.get();
        return true;
    });
    EXPECT_TRUE(counted_down);
}

// The same with the worker awake when the caller forks: busy until just after the fork, it then
// looks for work with the forked task in sight on the caller's deque. A worker of a pool of one
// leaves that deque to its caller, so it must sleep (not go round its idle loop for ever, as it
// would if its re-check before sleeping counted the deque) for its backstop to end and take it.
// The wait is bounded so that a regression fails instead of hanging.
TEST_P(caller_test,
       a_caller_blocked_on_its_own_fork_while_the_worker_was_busy_is_not_left_waiting) {
    fj::scheduler pool(workers());
    pool.execute([] {});
    std::atomic<bool> busy_started{false};
    std::atomic<bool> forked{false};
    fj::future<void> busy = pool.submit([&] {
        busy_started.store(true);
        fj_test::spin_until([&] { return forked.load(); }, std::chrono::seconds(20));
    });
    fj_test::spin_until([&] { return busy_started.load(); }, std::chrono::seconds(20));
    const bool released = pool.execute([&] {
        std::binary_semaphore done(0);
        fj::future<void> f = fj::fork([&done] { done.release(); });
        forked.store(true);
        // A std::binary_semaphore: the caller's thread blocks, nothing of the pool runs on it.
        const bool acquired = done.try_acquire_for(std::chrono::seconds(20));
        f.get();
        return acquired;
    });
    EXPECT_TRUE(released);
    busy.get();
}

// What a call forks and does not join is handed to the pool when the call returns: it runs later,
// on a worker, and the call does not wait for it.
TEST_P(caller_test, what_a_call_leaves_behind_runs_after_it_returns) {
    fj::scheduler pool(workers());
    std::atomic<bool> call_returned{false};
    fj::future<bool> left = pool.execute([&] {
        return fj::async([&] {
            // true if the call had returned before this task started (bounded: a task run inside
            // the call would wait here for nothing and report false)
            return fj_test::spin_until([&] { return call_returned.load(); },
                                       std::chrono::seconds(5));
        });
    });
    call_returned.store(true);
    EXPECT_TRUE(fj_test::get_or(left, false, "the left-behind task"));
}

TEST_P(caller_test, callers_racing_shutdown_finish_or_are_refused) {
    for (int round = 0; round < (fj_test::k_sanitized ? 5 : 20); ++round) {
        auto pool = std::make_unique<fj::scheduler>(workers());
        std::atomic<bool> go{false};
        std::atomic<int> wrong{0};
        std::vector<std::optional<fj::future<int>>> left(3);
        std::vector<std::thread> threads;
        for (int t = 0; t < 3; ++t)
            threads.emplace_back([&, t] {
                fj_test::spin_until([&] { return go.load(); });
                for (int r = 0; r < 50; ++r) {
                    try {
                        if (fib(*pool, 10) != 55)
                            wrong.fetch_add(1);
                        // A task left behind by a call accepted before the close still runs.
                        auto f = pool->execute([] { return fj::async([] { return 7; }); });
                        left[static_cast<std::size_t>(t)].emplace(std::move(f));
                    } catch (const fj::scheduler_closed&) {
                        break;
                    }
                }
            });
        go.store(true);
        pool->shutdown();
        for (std::thread& th : threads)
            th.join();
        EXPECT_EQ(wrong.load(), 0);
        for (auto& f : left) {
            if (f.has_value()) {
                EXPECT_EQ(fj_test::get_or(*f, -1, "a task left by an accepted call"), 7);
            }
        }
        EXPECT_THROW(pool->execute([] { return 0; }), fj::scheduler_closed);
        EXPECT_THROW(pool->join([] {}, [] {}), fj::scheduler_closed);
    }
}

// A worker of another pool keeps today's rule: its call queues the root in this pool and its
// own task waits (parks); the root runs on one of this pool's workers.
TEST_P(caller_test, a_worker_of_another_pool_calls_in) {
    fj::scheduler pool(workers());
    fj::scheduler other(2);
    fj::future<std::tuple<std::thread::id, std::thread::id, bool, std::int64_t>> f =
        other.submit([&] { // on one of other's workers
            const std::thread::id here = std::this_thread::get_id();
            const auto [id, on_pool] = pool.execute([&pool] {
                return std::pair{std::this_thread::get_id(), pool.on_worker_thread()};
            });
            return std::tuple{here, id, on_pool, fib(pool, 15)};
        });
    ASSERT_TRUE(fj_test::wait_ready(f));
    const auto [outer_thread, inner_thread, inner_on_pool, fib15] = f.get();
    EXPECT_NE(outer_thread, inner_thread);
    EXPECT_TRUE(inner_on_pool);
    EXPECT_EQ(fib15, 610);
    EXPECT_EQ(caller_slots_in(pool.stats()), 0u); // no worker of `other` took a caller's slot
}

TEST(caller_options, max_callers_out_of_range_is_refused) {
    fj::scheduler_options o;
    o.workers = 2;
    o.max_callers = fj::scheduler_options::max_callers_limit + 1;
    try {
        fj::scheduler pool(o);
        ADD_FAILURE() << "accepted max_callers beyond the limit";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("max_callers"), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(workers, caller_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
