// The blocking programs of the async catalogue (test/rescue/async_catalogue_test.cpp) written
// with forkjoin's own waits: fj::latch, fj::mutex with fj::condition_variable, fj::barrier,
// fj::promise, fj::channel and fj::this_task::sleep_for. Each has more waiting tasks than the pool
// has workers, with the task that releases them queued last. On pools of 1, 2 and 4 workers they
// give the expected results with no spare thread started: the waiters park, and their workers go
// on to the task that releases them.
#include "sync/sync_support.hpp"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <forkjoin/async.hpp>
#include <forkjoin/barrier.hpp>
#include <forkjoin/channel.hpp>
#include <forkjoin/condition_variable.hpp>
#include <forkjoin/latch.hpp>
#include <forkjoin/mutex.hpp>
#include <forkjoin/promise.hpp>
#include <forkjoin/this_task.hpp>

namespace {

class sync_catalogue : public fj_test::workers_test {
protected:
    void TearDown() override {
        if (m_pool != nullptr && fj_test::parks(*m_pool)) {
            EXPECT_EQ(fj_test::spares_started(*m_pool), 0u) << m_pool->stats();
        }
    }
    fj::scheduler& pool() {
        if (m_pool == nullptr)
            m_pool = std::make_unique<fj::scheduler>(workers());
        return *m_pool;
    }
    // More waiters than workers, plus two.
    int waiters() const { return static_cast<int>(workers()) + 2; }

private:
    std::unique_ptr<fj::scheduler> m_pool;
};

template <class T>
T sum_of(std::vector<fj::future<T>>& futures) {
    T sum{};
    for (auto& f : futures)
        sum += fj_test::get_or(f, T{});
    return sum;
}

TEST_P(sync_catalogue, latch_rendezvous) {
    fj::latch open(1);
    std::vector<fj::future<int>> futures;
    for (int i = 0; i < waiters(); ++i)
        futures.push_back(fj::async(pool(), [&open, i] {
            open.wait();
            return i;
        }));
    futures.push_back(fj::async(pool(), [&open] {
        open.count_down();
        return 0;
    }));
    const int n = waiters();
    EXPECT_EQ(sum_of(futures), n * (n - 1) / 2);
}

TEST_P(sync_catalogue, consumers_on_a_condition_variable_before_their_producer) {
    fj::mutex m;
    fj::condition_variable cv;
    std::deque<int> queue; // guarded by m
    constexpr int k_each = 20;
    std::vector<fj::future<long>> futures;
    for (int c = 0; c < waiters(); ++c)
        futures.push_back(fj::async(pool(), [&] {
            long sum = 0;
            for (int k = 0; k < k_each; ++k) {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return !queue.empty(); });
                sum += queue.front();
                queue.pop_front();
            }
            return sum;
        }));
    const int items = waiters() * k_each;
    futures.push_back(fj::async(pool(), [&, items] {
        for (int i = 1; i <= items; ++i) {
            {
                std::lock_guard lock(m);
                queue.push_back(i);
            }
            cv.notify_one();
        }
        return 0L;
    }));
    EXPECT_EQ(sum_of(futures), static_cast<long>(items) * (items + 1) / 2);
}

TEST_P(sync_catalogue, barrier_phases_with_more_parties_than_workers) {
    std::atomic<int> completions{0};
    fj::barrier sync(waiters(), [&completions]() noexcept { completions.fetch_add(1); });
    std::vector<fj::future<int>> futures;
    for (int p = 0; p < waiters(); ++p)
        futures.push_back(fj::async(pool(), [&sync] {
            for (int k = 0; k < 3; ++k)
                sync.arrive_and_wait();
            return 1;
        }));
    EXPECT_EQ(sum_of(futures), waiters());
    EXPECT_EQ(completions.load(), 3);
}

TEST_P(sync_catalogue, promise_pairs_fulfilled_by_later_tasks) {
    std::vector<fj::promise<int>> promises(static_cast<std::size_t>(waiters()));
    std::vector<fj::future<int>> futures;
    for (auto& p : promises)
        futures.push_back(
            fj::async(pool(), [f = p.get_future()]() mutable { return f.get() * 2; }));
    for (int i = 0; i < waiters(); ++i)
        futures.push_back(fj::async(pool(), [&promises, i] {
            promises[static_cast<std::size_t>(i)].set_value(i);
            return 0;
        }));
    const int n = waiters();
    EXPECT_EQ(sum_of(futures), n * (n - 1));
}

TEST_P(sync_catalogue, receivers_on_a_channel_before_their_senders) {
    fj::channel<int> ch(2);
    std::vector<fj::future<long>> futures;
    for (int r = 0; r < waiters(); ++r)
        futures.push_back(fj::async(pool(), [&ch] {
            long sum = 0;
            while (std::optional<int> v = ch.receive())
                sum += *v;
            return sum;
        }));
    constexpr int k_items = 500;
    futures.push_back(fj::async(pool(), [&ch] {
        for (int i = 1; i <= k_items; ++i)
            ch.send(i);
        ch.close();
        return 0L;
    }));
    EXPECT_EQ(sum_of(futures), static_cast<long>(k_items) * (k_items + 1) / 2);
}

TEST_P(sync_catalogue, many_sleepers_all_finish) {
    std::vector<fj::future<int>> futures;
    for (int i = 0; i < 16; ++i)
        futures.push_back(fj::async(pool(), [] {
            fj::this_task::sleep_for(std::chrono::milliseconds(20));
            return 1;
        }));
    EXPECT_EQ(sum_of(futures), 16);
}

INSTANTIATE_TEST_SUITE_P(workers, sync_catalogue, testing::Values(1, 2, 4),
                         fj_test::worker_count_name);

} // namespace
