// Seeded stress: coroutine waiters (fj::task and a coroutine type of the program's own), parked
// tasks and blocked threads wait together on one mutex, semaphore, channel and latch, in an
// order the seed picks, and plain threads release them. Every waiter gets through exactly once
// (no lost or doubled resumption), the mutex excludes, and every token and value is taken once.
#include "support.hpp"

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <forkjoin/channel.hpp>
#include <forkjoin/latch.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/semaphore.hpp>
#include <forkjoin/sync_await.hpp>
#include <forkjoin/task.hpp>

namespace {

struct reporting {
    struct promise_type {
        std::promise<void> done;
        reporting get_return_object() { return {done.get_future()}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() { done.set_value(); }
        void unhandled_exception() { done.set_exception(std::current_exception()); }
    };
    std::future<void> done;
};

struct shared_state {
    fj::mutex m;
    long counter = 0; // guarded by m
    fj::counting_semaphore<> tokens{0};
    std::atomic<int> acquired{0};
    fj::channel<int> values;
    std::atomic<long> received{0};
    fj::latch gate;
    std::atomic<int> through_gate{0};
    int rounds;

    shared_state(std::size_t capacity, std::ptrdiff_t gate_count, int r)
        : values(capacity), gate(gate_count), rounds(r) {}
};

// The same work in each kind of waiter: lock rounds, one token, values until closed, the gate.
fj::task<void> as_task_coroutine(shared_state& s, int role) {
    switch (role) {
    case 0:
        for (int i = 0; i < s.rounds; ++i) {
            co_await s.m.lock_async();
            ++s.counter;
            s.m.unlock();
        }
        break;
    case 1:
        co_await s.tokens.acquire_async();
        s.acquired.fetch_add(1);
        break;
    case 2:
        while (std::optional<int> v = co_await s.values.receive_async())
            s.received.fetch_add(*v);
        break;
    default:
        co_await s.gate.wait_async();
        s.through_gate.fetch_add(1);
    }
}

reporting as_foreign_coroutine(shared_state& s, int role) {
    switch (role) {
    case 0:
        for (int i = 0; i < s.rounds; ++i) {
            std::unique_lock<fj::mutex> hold = co_await s.m.scoped_lock_async();
            ++s.counter;
        }
        break;
    case 1:
        co_await s.tokens.acquire_async();
        s.acquired.fetch_add(1);
        break;
    case 2:
        while (std::optional<int> v = co_await s.values.receive_async())
            s.received.fetch_add(*v);
        break;
    default:
        co_await s.gate.wait_async();
        s.through_gate.fetch_add(1);
    }
}

void blocking(shared_state& s, int role) {
    switch (role) {
    case 0:
        for (int i = 0; i < s.rounds; ++i) {
            std::lock_guard hold(s.m);
            ++s.counter;
        }
        break;
    case 1:
        s.tokens.acquire();
        s.acquired.fetch_add(1);
        break;
    case 2:
        while (std::optional<int> v = s.values.receive())
            s.received.fetch_add(*v);
        break;
    default:
        s.gate.wait();
        s.through_gate.fetch_add(1);
    }
}

void run_seed(std::uint64_t seed) {
    fj_test::rng rng(seed);
    const int actors = fj_test::k_sanitized ? 16 : 40;
    const int rounds = fj_test::k_sanitized ? 20 : 100;
    fj::scheduler pool(2 + rng.below(2));
    // Roles are assigned in turn (0..3), kinds by the seed; the gate waits for its count-downs.
    shared_state s(rng.below(3), 3, rounds);
    int per_role[4] = {0, 0, 0, 0};
    std::vector<fj::future<void>> tasks;
    std::vector<reporting> foreign;
    std::vector<std::thread> threads;
    for (int a = 0; a < actors; ++a) {
        const int role = a % 4;
        ++per_role[role];
        switch (rng.below(4)) {
        case 0:
            tasks.push_back(fj::async(pool, as_task_coroutine(s, role)));
            break;
        case 1:
            foreign.push_back(as_foreign_coroutine(s, role));
            break;
        case 2:
            tasks.push_back(pool.submit([&s, role] { blocking(s, role); }));
            break;
        default:
            threads.emplace_back([&s, role] { blocking(s, role); });
        }
    }
    // The releases, from plain threads, interleaved by the seed.
    const std::uint64_t release_seed = rng.next();
    std::thread releaser([&s, &per_role, release_seed] {
        fj_test::rng order(release_seed);
        int tokens_left = per_role[1];
        int values_left = 50;
        int gate_left = 3;
        while (tokens_left > 0 || values_left > 0 || gate_left > 0) {
            switch (order.below(4)) {
            case 0:
                if (tokens_left > 0) {
                    const int n = std::min(tokens_left, 1 + static_cast<int>(order.below(3)));
                    s.tokens.release(n);
                    tokens_left -= n;
                }
                break;
            case 1:
            case 2:
                if (values_left > 0)
                    s.values.send(values_left--);
                break;
            default:
                if (gate_left > 0) {
                    s.gate.count_down();
                    --gate_left;
                }
            }
            if (order.below(8) == 0)
                std::this_thread::yield();
        }
        s.values.close();
    });
    // The lock is also taken from this thread meanwhile.
    for (int i = 0; i < rounds; ++i) {
        std::lock_guard hold(s.m);
        ++s.counter;
    }
    releaser.join();
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t)) << "seed " << seed;
    for (auto& f : foreign) {
        ASSERT_EQ(f.done.wait_for(fj_test::k_deadline), std::future_status::ready)
            << "seed " << seed << ": a coroutine was not resumed";
        f.done.get();
    }
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(s.counter, long{rounds} * (per_role[0] + 1)) << "seed " << seed;
    EXPECT_EQ(s.acquired.load(), per_role[1]) << "seed " << seed;
    EXPECT_EQ(s.received.load(), 50L * 51 / 2) << "seed " << seed;
    EXPECT_EQ(s.through_gate.load(), per_role[3]) << "seed " << seed;
    EXPECT_FALSE(s.tokens.try_acquire()) << "seed " << seed;
}

class sync_mix_stress : public fj_test::guarded_test {};

TEST_F(sync_mix_stress, coroutines_parked_tasks_and_threads_share_the_queues) {
    const std::uint64_t seeds = fj_test::k_sanitized ? 6 : 24;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed)
        run_seed(seed);
}

} // namespace
