// fj::enumerable_thread_specific and fj::combinable: one element per thread (pool workers and
// outside threads), created once, at a stable address; combine and combine_each see every
// element; clear; many threads' first local() at once; containers created and destroyed over and
// over never hand out a dead container's element; and the rule for waits: a task that parks and
// resumes on another thread gets that thread's element from a fresh local(), while the reference
// it took before still names the old thread's element.
#include "support.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using namespace std::chrono_literals;
using fj_test::spin_until;

class thread_specific_test : public fj_test::workers_test {};

// The element iterators are forward iterators (copyable, multi-pass), and iterator converts to
// const_iterator, not back.
using ets_of_vectors = fj::enumerable_thread_specific<std::vector<int>>;
static_assert(std::forward_iterator<ets_of_vectors::iterator>);
static_assert(std::forward_iterator<ets_of_vectors::const_iterator>);
static_assert(std::is_convertible_v<ets_of_vectors::iterator, ets_of_vectors::const_iterator>);
static_assert(!std::is_convertible_v<ets_of_vectors::const_iterator, ets_of_vectors::iterator>);

// The calling thread's identity, read afresh on every call: glibc declares pthread_self() const,
// so a compiler could otherwise reuse a value read before a wait that moved the task
// (docs/design/parking.md).
[[gnu::noinline]] std::thread::id this_thread_id() {
    std::thread::id id = std::this_thread::get_id();
    asm volatile("" : : "r"(&id) : "memory");
    return id;
}

TEST_P(thread_specific_test, loop_bodies_add_up_whichever_threads_ran_them) {
    fj::scheduler pool(workers());
    const long n = static_cast<long>(fj_test::scaled(200'000));
    fj::combinable<long> count;
    fj::enumerable_thread_specific<long> ets(0L);
    fj::parallel_for(pool, 0L, n, [&](long i) {
        ++count.local();
        ets.local() += i;
    });
    EXPECT_EQ(count.combine(std::plus<>{}), n);
    EXPECT_EQ(ets.combine(std::plus<>{}), n * (n - 1) / 2);
    EXPECT_GE(ets.size(), 1u);
    long visited = 0, summed = 0;
    for (long x : ets) {
        ++visited;
        summed += x;
    }
    EXPECT_EQ(visited, static_cast<long>(ets.size()));
    EXPECT_EQ(summed, n * (n - 1) / 2);
    long each = 0;
    count.combine_each([&](long x) { each += x; });
    EXPECT_EQ(each, n);
}

TEST(thread_specific, outside_threads_get_one_element_each) {
    fj_test::watchdog dog(fj_test::current_test_name());
    constexpr int k_threads = 8;
    std::atomic<int> made{0};
    fj::enumerable_thread_specific<std::vector<int>> parts([&] {
        made.fetch_add(1);
        return std::vector<int>{};
    });
    std::vector<std::thread> threads;
    std::atomic<int> ready{0}, finished{0};
    std::array<const void*, k_threads> first{}, again{};
    std::array<bool, k_threads> existed_first{}, existed_again{};
    for (int t = 0; t < k_threads; ++t)
        threads.emplace_back([&, t] {
            ready.fetch_add(1);
            spin_until([&] { return ready.load() == k_threads; }); // first calls all at once
            bool exists = true;
            std::vector<int>& mine = parts.local(exists);
            existed_first[static_cast<std::size_t>(t)] = exists;
            first[static_cast<std::size_t>(t)] = &mine;
            for (int i = 0; i < 1000; ++i)
                parts.local().push_back(t);
            again[static_cast<std::size_t>(t)] = &parts.local(exists);
            existed_again[static_cast<std::size_t>(t)] = exists;
            // Stay alive until every thread has its element: a thread's number (and with it its
            // element) passes to a later thread once it exits.
            finished.fetch_add(1);
            spin_until([&] { return finished.load() == k_threads; });
        });
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(made.load(), k_threads);
    EXPECT_EQ(parts.size(), static_cast<std::size_t>(k_threads));
    EXPECT_FALSE(parts.empty());
    std::set<const void*> distinct(first.begin(), first.end());
    EXPECT_EQ(distinct.size(), static_cast<std::size_t>(k_threads));
    for (int t = 0; t < k_threads; ++t) {
        EXPECT_FALSE(existed_first[static_cast<std::size_t>(t)]);
        EXPECT_TRUE(existed_again[static_cast<std::size_t>(t)]);
        EXPECT_EQ(first[static_cast<std::size_t>(t)], again[static_cast<std::size_t>(t)]);
    }
    std::size_t total = 0;
    for (const auto& part : parts) {
        EXPECT_EQ(part.size(), 1000u);
        EXPECT_TRUE(std::all_of(part.begin(), part.end(), [&](int x) { return x == part[0]; }));
        total += part.size();
    }
    EXPECT_EQ(total, 1000u * k_threads);
}

// Many threads make their first call at the same moment, on many fresh containers in a row: each
// gets its own element, built once, and the containers' tables grow under the race.
TEST(thread_specific, concurrent_first_calls_on_fresh_containers) {
    fj_test::watchdog dog(fj_test::current_test_name());
    constexpr int k_threads = 12; // more than the first segment of the table (8 slots)
    const int rounds = static_cast<int>(fj_test::scaled(300));
    std::atomic<int> made{0};
    std::unique_ptr<fj::combinable<long>> current;
    std::atomic<int> round_started{-1}, done{0};
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < k_threads; ++t)
        threads.emplace_back([&] {
            for (int round = 0; round < rounds; ++round) {
                spin_until([&] { return round_started.load() >= round; }, 30s);
                bool exists = true;
                long& mine = current->local(exists);
                if (exists || mine != 5)
                    wrong.fetch_add(1);
                mine += 1;
                done.fetch_add(1);
                spin_until([&] { return round_started.load() > round || round + 1 == rounds; },
                           30s);
            }
        });
    for (int round = 0; round < rounds; ++round) {
        made = 0;
        current = std::make_unique<fj::combinable<long>>([&] {
            made.fetch_add(1);
            return 5L;
        });
        done = 0;
        round_started = round;
        ASSERT_TRUE(spin_until([&] { return done.load() == k_threads; }, 30s));
        EXPECT_EQ(made.load(), k_threads) << "round " << round;
        EXPECT_EQ(current->combine(std::plus<>{}), 6L * k_threads) << "round " << round;
    }
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(wrong.load(), 0);
}

// A container created where a destroyed one was (often the same address) starts empty on every
// thread: nothing of the old one is handed out.
TEST_P(thread_specific_test, containers_created_and_destroyed_repeatedly) {
    fj::scheduler pool(workers());
    const int rounds = static_cast<int>(fj_test::scaled(2000));
    for (int round = 0; round < rounds; ++round) {
        auto ets = std::make_unique<fj::enumerable_thread_specific<int>>(round);
        std::atomic<int> stale{0};
        fj::parallel_for(pool, 0, 64, [&](int) {
            bool exists = false;
            int& mine = ets->local(exists);
            if (!exists && mine != round)
                stale.fetch_add(1);
            ++mine;
        });
        const int sum = ets->combine(std::plus<>{});
        ASSERT_EQ(stale.load(), 0) << "round " << round;
        ASSERT_EQ(sum - round * static_cast<int>(ets->size()), 64) << "round " << round;
    }
}

TEST(thread_specific, elements_keep_their_address_while_the_table_grows) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::enumerable_thread_specific<std::uint64_t> ets(std::uint64_t{7});
    std::uint64_t* const main_element = &ets.local();
    std::vector<std::thread> threads;
    for (int t = 0; t < 40; ++t) // the number of live threads reaches past several segments
        threads.emplace_back([&] { ets.local() += 1; });
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(&ets.local(), main_element);
    EXPECT_EQ(*main_element, 7u);
    EXPECT_GE(ets.size(), 2u);
    EXPECT_EQ(ets.combine(std::plus<>{}), 7u * ets.size() + 40u);
    for (const std::uint64_t& x : ets)
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&x) % 64, 0u) << "one cache line each";
}

TEST(thread_specific, clear_and_combine_of_nothing) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::combinable<int> c([] { return 100; });
    EXPECT_EQ(c.combine(std::plus<>{}), 100) << "no elements: a fresh one";
    c.local() += 1;
    EXPECT_EQ(c.combine(std::plus<>{}), 101);
    c.clear();
    bool exists = true;
    EXPECT_EQ(c.local(exists), 100);
    EXPECT_FALSE(exists);
    fj::enumerable_thread_specific<std::string> names(std::string("x"));
    EXPECT_TRUE(names.empty());
    names.local() += "y";
    EXPECT_EQ(names.size(), 1u);
    names.clear();
    EXPECT_TRUE(names.empty());
    EXPECT_EQ(names.begin(), names.end());
    EXPECT_EQ(names.combine([](const std::string& a, const std::string& b) { return a + b; }), "x");
    fj::combinable<int> zero;
    EXPECT_EQ(zero.combine(std::plus<>{}), 0);
}

// Elements need not be movable: they are built in place from the initializer's result.
TEST(thread_specific, elements_need_not_be_movable) {
    fj_test::watchdog dog(fj_test::current_test_name());
    struct counter {
        std::atomic<long> value{0};
        std::mutex unused;
    };
    fj::enumerable_thread_specific<counter> ets([] { return counter{}; });
    ets.local().value += 3;
    long sum = 0;
    ets.combine_each([&](const counter& c) { sum += c.value.load(); });
    EXPECT_EQ(sum, 3);
}

TEST(thread_specific, an_empty_initializer_is_rejected) {
    std::function<int()> empty;
    EXPECT_THROW(fj::combinable<int>{empty}, std::invalid_argument);
    EXPECT_THROW(fj::enumerable_thread_specific<int>{empty}, std::invalid_argument);
}

// A thread's number passes to a later thread once it exits, and with it the elements it left:
// shared by no two live threads, so every increment is still counted once.
TEST(thread_specific, threads_that_come_and_go) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::combinable<long> count;
    const int waves = static_cast<int>(fj_test::scaled(50));
    for (int wave = 0; wave < waves; ++wave) {
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 100; ++i)
                    ++count.local();
            });
        for (auto& th : threads)
            th.join();
    }
    EXPECT_EQ(count.combine(std::plus<>{}), 400L * waves);
    long elements = 0;
    count.combine_each([&](long) { ++elements; });
    EXPECT_LE(elements, 5) << "numbers are reused, so elements do not grow with the waves";
}

// The rule for waits. The root takes its element on worker A, forks a child that worker B steals,
// and waits. Then a long task holds A until the root has returned, so the root, parked, can only
// resume on B (the worker that finishes the child resumes its waiter: parking_test). After the
// wait, a fresh local() is B's element; the reference taken before still points at A's element,
// which the long task on A is using now.
TEST(thread_specific_waits, a_task_resumed_on_another_thread_gets_that_threads_element) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler_options options;
    options.workers = 2;
    options.park_waiting_tasks = true;
    fj::scheduler pool(options);
    if (!pool.stats().parking)
        GTEST_SKIP() << "parking is off (FJ_PARKING=0): a waiting task never changes thread";
    fj::enumerable_thread_specific<int> ets(0);
    std::mutex m;
    std::map<std::thread::id, int*> element_of; // each thread's element, as seen by its tasks
    auto note = [&](int* e) {
        std::lock_guard lock(m);
        auto [it, fresh] = element_of.emplace(this_thread_id(), e);
        return fresh || it->second == e;
    };
    const int rounds = static_cast<int>(fj_test::scaled(20));
    int moved = 0;
    for (int round = 0; round < rounds; ++round) {
        std::atomic<bool> child_started{false}, long_started{false}, root_returned{false};
        std::atomic<int*> long_tasks_element{nullptr};
        struct seen {
            int* before = nullptr;
            int* after = nullptr;
            std::thread::id thread_before, thread_after;
            bool consistent = true;
        } s;
        fj::future<void> long_task; // waited for below: it uses this round's variables
        auto root = pool.submit([&] {
            s.thread_before = this_thread_id();
            s.before = &ets.local();
            s.consistent = note(s.before);
            auto child = fj::fork([&] {
                child_started = true;
                spin_until([&] { return long_started.load(); }, 20s);
                return 1;
            });
            spin_until([&] { return child_started.load(); }, 20s);
            long_task = fj::current_scheduler().submit([&] {
                long_tasks_element = &ets.local();
                (void)note(long_tasks_element.load());
                long_started = true;
                spin_until([&] { return root_returned.load(); }, 20s);
            });
            const int one = child.get(); // parks: worker A goes on with the long task
            s.thread_after = this_thread_id();
            s.after = &ets.local(); // again, after the wait
            s.consistent = s.consistent && note(s.after);
            *s.after += one;
            root_returned = true;
        });
        ASSERT_TRUE(fj_test::get_void(root));
        ASSERT_TRUE(fj_test::get_void(long_task));
        EXPECT_TRUE(s.consistent) << "a thread's local() changed between calls";
        if (s.thread_after != s.thread_before) {
            ++moved;
            EXPECT_NE(s.after, s.before) << "after the move, the new thread's element";
            EXPECT_EQ(long_tasks_element.load(), s.before)
                << "the reference from before the wait is now the old thread's, in use there";
        } else {
            EXPECT_EQ(s.after, s.before);
        }
    }
    pool.shutdown();
    EXPECT_EQ(ets.combine(std::plus<>{}), rounds);
    EXPECT_GT(moved, 0) << "the root never resumed on the other worker";
}

// Recursive tasks that fork and wait at every level, adding to their thread's element before and
// after each wait (calling local() afresh each time): the total is exact whichever threads ran
// which part and wherever the waits resumed, with parking on and off.
long count_nodes(fj::combinable<long>& nodes, int depth) {
    ++nodes.local();
    if (depth == 0)
        return 1;
    auto left = fj::fork([&nodes, depth] { return count_nodes(nodes, depth - 1); });
    const long right = count_nodes(nodes, depth - 1);
    const long l = left.get(); // may resume on another thread
    ++nodes.local();           // so: local() again
    return l + right + 1;
}

TEST_P(thread_specific_test, counts_across_waits_are_exact) {
    fj::scheduler pool(workers());
    const int depth = fj_test::k_sanitized ? 12 : 16;
    fj::combinable<long> nodes;
    const long tree = pool.submit([&] { return count_nodes(nodes, depth); }).get();
    const long inner = (1L << depth) - 1;
    EXPECT_EQ(tree, (1L << (depth + 1)) - 1);
    EXPECT_EQ(nodes.combine(std::plus<>{}), tree + inner);
}

INSTANTIATE_TEST_SUITE_P(workers, thread_specific_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
