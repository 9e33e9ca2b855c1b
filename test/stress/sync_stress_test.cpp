// The task-parking primitives under random timing: timeouts racing hand-overs, tokens and
// notifies; channels closed while senders and receivers wait; pools shut down while tasks wait on
// deadlines. Nothing is lost or taken twice: every lock taken is counted once, every token comes
// back, every value a send delivered is received exactly once, and every task finishes.
#include "stress/stress_seed.hpp"
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include <forkjoin/channel.hpp>
#include <forkjoin/condition_variable.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/semaphore.hpp>
#include <forkjoin/this_task.hpp>

namespace {

using std::chrono::microseconds;

class sync_stress : public fj_test::workers_test {};

TEST_P(sync_stress, timeouts_race_hand_overs_tokens_and_notifies) {
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    fj_test::rng random(seed);
    fj::scheduler pool(workers());
    for (std::size_t round = 0; round < fj_test::scaled(200); ++round) {
        fj::mutex m;
        long counter = 0; // guarded by m
        std::atomic<long> locks_taken{0};
        const int k_tokens = 1 + static_cast<int>(random.below(3));
        fj::counting_semaphore<4> tokens(k_tokens);
        fj::mutex flag_lock;
        fj::condition_variable flag_cv;
        bool flag = false; // guarded by flag_lock
        std::vector<fj::future<void>> tasks;
        const std::size_t n = 4 + random.below(13);
        for (std::size_t t = 0; t < n; ++t) {
            const std::size_t op = random.below(3);
            const microseconds patience(random.below(300));
            tasks.push_back(pool.submit([&, op, patience] {
                if (op == 0) {
                    if (m.try_lock_for(patience)) {
                        ++counter;
                        locks_taken.fetch_add(1);
                        m.unlock();
                    }
                } else if (op == 1) {
                    if (tokens.try_acquire_for(patience)) {
                        fj::this_task::sleep_for(microseconds(50));
                        tokens.release();
                    }
                } else {
                    std::unique_lock lock(flag_lock);
                    (void)flag_cv.wait_for(lock, patience, [&] { return flag; });
                }
            }));
        }
        tasks.push_back(pool.submit([&] {
            {
                std::lock_guard hold(flag_lock);
                flag = true;
            }
            flag_cv.notify_all();
            flag_cv.notify_one();
        }));
        for (auto& t : tasks)
            ASSERT_TRUE(fj_test::get_void(t));
        std::lock_guard hold(m);
        EXPECT_EQ(counter, locks_taken.load());
        int left = 0;
        while (tokens.try_acquire())
            ++left;
        EXPECT_EQ(left, k_tokens); // every token came back
    }
}

TEST_P(sync_stress, channels_closed_while_senders_and_receivers_wait) {
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    fj_test::rng random(seed);
    fj::scheduler pool(workers());
    for (std::size_t round = 0; round < fj_test::scaled(200); ++round) {
        fj::channel<int> ch(random.below(4));
        const int senders = 1 + static_cast<int>(random.below(3));
        const int receivers = 1 + static_cast<int>(random.below(3));
        constexpr int k_each = 50;
        std::vector<fj::future<std::vector<int>>> sent;
        for (int s = 0; s < senders; ++s)
            sent.push_back(pool.submit([&ch, s] {
                std::vector<int> delivered;
                try {
                    for (int i = 0; i < k_each; ++i) {
                        ch.send(s * k_each + i);
                        delivered.push_back(s * k_each + i);
                    }
                } catch (const fj::channel_closed&) {
                }
                return delivered;
            }));
        std::vector<fj::future<std::vector<int>>> received;
        for (int r = 0; r < receivers; ++r)
            received.push_back(pool.submit([&ch] {
                std::vector<int> got;
                while (std::optional<int> v = ch.receive())
                    got.push_back(*v);
                return got;
            }));
        const microseconds before_close(random.below(500));
        fj::future<void> closer = pool.submit([&ch, before_close] {
            fj::this_task::sleep_for(before_close);
            ch.close();
        });
        ASSERT_TRUE(fj_test::get_void(closer));
        std::multiset<int> delivered;
        for (auto& f : sent)
            for (int v : fj_test::get_or(f, std::vector<int>{}))
                delivered.insert(v);
        std::multiset<int> got;
        for (auto& f : received)
            for (int v : fj_test::get_or(f, std::vector<int>{}))
                got.insert(v);
        EXPECT_EQ(got, delivered); // each delivered value received once, nothing else
    }
}

TEST_P(sync_stress, a_pool_shut_down_while_tasks_wait_on_deadlines_finishes_them_all) {
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    fj_test::rng random(seed);
    for (std::size_t round = 0; round < fj_test::scaled(100); ++round) {
        std::atomic<int> finished{0};
        fj::mutex m;
        fj::condition_variable never;
        const std::size_t n = 1 + random.below(12);
        {
            fj::scheduler pool(workers());
            for (std::size_t t = 0; t < n; ++t) {
                const microseconds wait(random.below(2'000));
                const bool sleep = random.below(2) == 0;
                (void)pool.submit([&, wait, sleep] {
                    if (sleep) {
                        fj::this_task::sleep_for(wait);
                    } else {
                        std::unique_lock lock(m);
                        (void)never.wait_for(lock, wait);
                    }
                    finished.fetch_add(1);
                });
            }
        } // shutdown: waits for every parked task to resume and finish
        EXPECT_EQ(finished.load(), static_cast<int>(n));
    }
}

INSTANTIATE_TEST_SUITE_P(workers, sync_stress, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
