// fj::shared_mutex: readers together, writers alone, parking instead of blocking, phase-fair
// arrival order (no starvation either way), timed and try forms, tasks mixed with threads.
#include "sync/sync_support.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <forkjoin/parallel_for.hpp>
#include <forkjoin/shared_mutex.hpp>

namespace {

using namespace std::chrono_literals;

// Plain threads (not tasks) hold the lock together: each waits inside until all are inside, which
// only ends if none excludes the others.
TEST(fj_shared_mutex, readers_hold_it_together) {
    fj::shared_mutex m;
    constexpr int k_readers = 4;
    std::atomic<int> inside{0};
    std::atomic<int> all_in{0};
    std::vector<std::thread> readers;
    for (int i = 0; i < k_readers; ++i)
        readers.emplace_back([&] {
            std::shared_lock hold(m);
            inside.fetch_add(1);
            if (fj_test::spin_until([&] { return inside.load() == k_readers; }))
                all_in.fetch_add(1);
        });
    for (auto& t : readers)
        t.join();
    EXPECT_EQ(all_in.load(), k_readers);
    // Free again: a writer gets it at once.
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(fj_shared_mutex, a_writer_excludes_readers_and_writers) {
    fj::scheduler pool(2);
    fj::shared_mutex m;
    m.lock();
    fj::future<void> on_task = pool.submit([&] {
        EXPECT_FALSE(m.try_lock());
        EXPECT_FALSE(m.try_lock_shared());
    });
    EXPECT_TRUE(fj_test::get_void(on_task));
    std::thread on_thread([&] {
        EXPECT_FALSE(m.try_lock());
        EXPECT_FALSE(m.try_lock_shared());
    });
    on_thread.join();
    m.unlock();
    // A reader excludes writers, not readers.
    std::shared_lock reading(m);
    EXPECT_FALSE(m.try_lock());
    EXPECT_TRUE(m.try_lock_shared());
    m.unlock_shared();
}

TEST(fj_shared_mutex, tasks_waiting_park_and_leave_their_workers_free) {
    fj::scheduler pool(2);
    fj::shared_mutex m;
    std::atomic<int> started{0};
    int writes = 0; // guarded by m (exclusively)
    std::atomic<int> reads{0};
    m.lock();
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 8; ++i)
        tasks.push_back(pool.submit([&, i] {
            started.fetch_add(1);
            if (i % 2 == 0) {
                std::unique_lock hold(m);
                ++writes;
            } else {
                std::shared_lock hold(m);
                reads.fetch_add(1);
            }
        }));
    if (fj_test::parks(pool)) {
        // Every task starts although 2 workers and the lock is held: the waiters are parked.
        EXPECT_TRUE(fj_test::spin_until([&] { return started.load() == 8; }));
        fj_test::expect_parks_reach(pool, 8);
        EXPECT_EQ(fj_test::spares_started(pool), 0u);
        EXPECT_EQ(pool.stats().total().sync_parks, 8u); // each parked on the shared mutex
    }
    m.unlock();
    for (auto& t : tasks)
        EXPECT_TRUE(fj_test::get_void(t));
    std::unique_lock hold(m);
    EXPECT_EQ(writes, 4);
    EXPECT_EQ(reads.load(), 4);
}

// The arrival order, with the lock held by the test: each waiter queues (and parks) before the
// next is submitted. Records who got in, in order, on a std::mutex of its own (readers share the
// shared mutex).
class arrivals {
public:
    explicit arrivals(fj::scheduler& pool, fj::shared_mutex& m) : m_pool(pool), m_mutex(m) {}

    void add(char name, bool writer) {
        const std::uint64_t parks_before = fj_test::parks_so_far(m_pool);
        m_tasks.push_back(m_pool.submit([this, name, writer] {
            if (writer) {
                std::unique_lock hold(m_mutex);
                note(name);
            } else {
                std::shared_lock hold(m_mutex);
                note(name);
            }
        }));
        fj_test::expect_parks_reach(m_pool, parks_before + 1); // queued, in order
    }

    std::string finish() {
        for (auto& t : m_tasks)
            EXPECT_TRUE(fj_test::get_void(t));
        std::lock_guard hold(m_log_lock);
        return m_log;
    }

private:
    void note(char name) {
        std::lock_guard hold(m_log_lock);
        m_log += name;
    }

    fj::scheduler& m_pool;
    fj::shared_mutex& m_mutex;
    std::vector<fj::future<void>> m_tasks;
    std::mutex m_log_lock;
    std::string m_log;
};

// A writer waiting behind a reader stops the readers that come after it: with the lock held
// shared all along, a stream of readers would otherwise keep it shared for ever.
TEST(fj_shared_mutex, a_waiting_writer_is_not_starved_by_a_stream_of_readers) {
    fj::scheduler pool(2);
    if (!fj_test::parks(pool))
        GTEST_SKIP() << "parking is off: the order of blocked threads is not observable here";
    fj::shared_mutex m;
    m.lock_shared();
    arrivals order(pool, m);
    order.add('W', true);
    // New readers find the lock shared, and still wait.
    EXPECT_FALSE(m.try_lock_shared());
    std::thread late_reader([&] { EXPECT_FALSE(m.try_lock_shared_for(5ms)); });
    late_reader.join();
    for (char r : std::string("abcdefgh"))
        order.add(r, false);
    m.unlock_shared();
    const std::string log = order.finish();
    ASSERT_EQ(log.size(), 9u);
    EXPECT_EQ(log[0], 'W') << log;
}

// Phases in arrival order: the writer at the front alone, then every reader queued before the
// next writer, together, then that writer, and so on. A writer never passes a reader that came
// before it, so writers do not starve readers either.
TEST(fj_shared_mutex, waiters_get_it_in_arrival_order_in_phases) {
    fj::scheduler pool(1);
    if (!fj_test::parks(pool))
        GTEST_SKIP() << "parking is off: the order of blocked threads is not observable here";
    fj::shared_mutex m;
    m.lock();
    arrivals order(pool, m);
    order.add('A', true);
    order.add('b', false);
    order.add('c', false);
    order.add('D', true);
    order.add('e', false);
    order.add('F', true);
    order.add('g', false);
    m.unlock();
    const std::string log = order.finish();
    EXPECT_TRUE(log == "AbcDeFg" || log == "AcbDeFg") << log;
}

// The readers of a phase are admitted together: each waits inside until all of them are, which
// only ends if the writer's unlock let them all in. 4 workers: the 3 readers spin on 3 of them.
TEST(fj_shared_mutex, readers_queued_behind_a_writer_are_admitted_together) {
    fj::scheduler pool(4);
    if (!fj_test::parks(pool))
        GTEST_SKIP() << "parking is off: the readers would block their workers";
    fj::shared_mutex m;
    m.lock();
    std::atomic<int> inside{0};
    std::atomic<int> all_in{0};
    std::vector<fj::future<void>> readers;
    for (int i = 0; i < 3; ++i) {
        const std::uint64_t parks_before = fj_test::parks_so_far(pool);
        readers.push_back(pool.submit([&] {
            std::shared_lock hold(m);
            inside.fetch_add(1);
            if (fj_test::spin_until([&] { return inside.load() == 3; }))
                all_in.fetch_add(1);
        }));
        fj_test::expect_parks_reach(pool, parks_before + 1);
    }
    m.unlock();
    for (auto& t : readers)
        EXPECT_TRUE(fj_test::get_void(t));
    EXPECT_EQ(all_in.load(), 3);
}

TEST(fj_shared_mutex, try_and_timed_forms_on_a_task_and_on_a_thread) {
    fj::scheduler pool(2);
    fj::shared_mutex m;
    m.lock();
    auto expect_timeouts = [&] {
        const auto began = std::chrono::steady_clock::now();
        EXPECT_FALSE(m.try_lock_for(10ms));
        EXPECT_FALSE(m.try_lock_shared_for(10ms));
        EXPECT_GE(std::chrono::steady_clock::now() - began, 20ms);
        EXPECT_FALSE(m.try_lock_until(std::chrono::system_clock::now() + 2ms));
        EXPECT_FALSE(m.try_lock_shared_until(std::chrono::steady_clock::now() + 2ms));
    };
    fj::future<void> on_task = pool.submit(expect_timeouts);
    EXPECT_TRUE(fj_test::get_void(on_task));
    std::thread on_thread(expect_timeouts);
    on_thread.join();

    // Timed waits that the unlock ends: a writer first, then a reader behind it.
    const std::uint64_t parks_before = fj_test::parks_so_far(pool);
    fj::future<bool> writer = pool.submit([&] {
        const bool got = m.try_lock_for(60s);
        if (got)
            m.unlock();
        return got;
    });
    if (fj_test::parks(pool))
        fj_test::expect_parks_reach(pool, parks_before + 1);
    fj::future<bool> reader = pool.submit([&] {
        const bool got = m.try_lock_shared_until(std::chrono::system_clock::now() + 60s);
        if (got)
            m.unlock_shared();
        return got;
    });
    if (fj_test::parks(pool))
        fj_test::expect_parks_reach(pool, parks_before + 2);
    m.unlock();
    EXPECT_TRUE(fj_test::get_or(writer, false));
    EXPECT_TRUE(fj_test::get_or(reader, false));

    // Held shared: the shared forms succeed at once, the exclusive ones time out.
    std::shared_lock reading(m);
    EXPECT_TRUE(m.try_lock_shared_for(60s));
    m.unlock_shared();
    EXPECT_FALSE(m.try_lock_for(2ms));
    EXPECT_TRUE(m.try_lock_shared()); // the writer's timeout left nobody queued
    m.unlock_shared();
}

// A writer that times out at the front of the queue while readers hold the lock lets the readers
// queued behind it in at once: they do not wait for the holders to leave.
TEST(fj_shared_mutex, a_writer_timing_out_lets_the_readers_behind_it_in) {
    fj::scheduler pool(2);
    if (!fj_test::parks(pool))
        GTEST_SKIP() << "parking is off: the order of blocked threads is not observable here";
    fj::shared_mutex m;
    m.lock_shared(); // held until the end
    fj::future<bool> writer = pool.submit([&] { return m.try_lock_for(300ms); });
    fj_test::expect_parks_reach(pool, 1);
    fj::future<void> reader = pool.submit([&] { std::shared_lock hold(m); });
    // The reader queues behind the writer, unless a loaded machine let the writer time out
    // first (then the reader finds the lock shared and nobody queued: it gets in as well).
    (void)fj_test::spin_until([&] { return fj_test::parks_so_far(pool) >= 2; }, 300ms);
    EXPECT_FALSE(fj_test::get_or(writer, true));
    EXPECT_TRUE(fj_test::get_void(reader));
    m.unlock_shared();
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(fj_shared_mutex, a_task_may_unlock_what_a_thread_locked) {
    fj::scheduler pool(2);
    fj::shared_mutex m;
    m.lock();
    fj::future<void> unlocker = pool.submit([&] { m.unlock(); });
    EXPECT_TRUE(fj_test::get_void(unlocker));
    m.lock_shared();
    fj::future<void> shared_unlocker = pool.submit([&] { m.unlock_shared(); });
    EXPECT_TRUE(fj_test::get_void(shared_unlocker));
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

class fj_shared_mutex_workers : public fj_test::workers_test {};

// Readers and writers, tasks and plain threads: a writer is alone, a reader sees no writer, and
// every write lands.
TEST_P(fj_shared_mutex_workers, excludes_writers_from_everyone_across_tasks_and_threads) {
    fj::scheduler pool(workers());
    fj::shared_mutex m;
    long counter = 0; // written under the exclusive lock, read under the shared one
    std::atomic<int> readers_in{0};
    std::atomic<bool> writer_in{false};
    std::atomic<int> violations{0};
    auto visit = [&](int i) {
        if (i % 4 == 0) {
            std::unique_lock hold(m);
            if (writer_in.exchange(true) || readers_in.load() != 0)
                violations.fetch_add(1);
            ++counter;
            writer_in.store(false);
        } else {
            std::shared_lock hold(m);
            readers_in.fetch_add(1);
            if (writer_in.load() || counter < 0) // reads what the writers write
                violations.fetch_add(1);
            readers_in.fetch_sub(1);
        }
    };
    std::vector<std::thread> outside;
    for (int t = 0; t < 2; ++t)
        outside.emplace_back([&] {
            for (int i = 0; i < 400; ++i)
                visit(i);
        });
    fj::parallel_for(pool, 0, 2'000, [&](int i) { visit(i); });
    for (auto& t : outside)
        t.join();
    std::shared_lock hold(m);
    EXPECT_EQ(counter, 500 + 2 * 100);
    EXPECT_EQ(violations.load(), 0);
}

// A seeded mix of readers, writers and timed tries of both kinds, from tasks and a thread.
TEST_P(fj_shared_mutex_workers, seeded_stress_of_readers_writers_and_timeouts) {
    fj::scheduler pool(workers());
    fj::shared_mutex m;
    long writes = 0; // guarded by m (exclusively)
    std::atomic<long> writers_got{0};
    std::atomic<int> readers_in{0};
    std::atomic<bool> writer_in{false};
    std::atomic<int> violations{0};
    auto visit = [&](std::uint64_t seed) {
        fj_test::rng r(seed);
        const std::size_t kind = r.below(10);
        const bool writer = kind < 3;
        bool got = true;
        if (kind == 0 || kind == 9)
            got = writer ? m.try_lock_for(std::chrono::microseconds(r.below(200)))
                         : m.try_lock_shared_for(std::chrono::microseconds(r.below(200)));
        else if (writer)
            m.lock();
        else
            m.lock_shared();
        if (!got)
            return;
        if (writer) {
            if (writer_in.exchange(true) || readers_in.load() != 0)
                violations.fetch_add(1);
            ++writes;
            writers_got.fetch_add(1);
            writer_in.store(false);
            m.unlock();
        } else {
            readers_in.fetch_add(1);
            if (writer_in.load())
                violations.fetch_add(1);
            if (r.below(4) == 0)
                std::this_thread::yield(); // holds it a while: others queue behind
            readers_in.fetch_sub(1);
            m.unlock_shared();
        }
    };
    const int k_visits = fj_test::k_sanitized ? 2'000 : 6'000;
    std::thread outside([&] {
        for (int i = 0; i < k_visits / 10; ++i)
            visit(1'000'000 + static_cast<std::uint64_t>(i));
    });
    fj::parallel_for(pool, 0, k_visits, [&](int i) { visit(static_cast<std::uint64_t>(i)); });
    outside.join();
    std::unique_lock hold(m);
    EXPECT_EQ(writes, writers_got.load());
    EXPECT_EQ(violations.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(workers, fj_shared_mutex_workers, fj_test::worker_counts(),
                         fj_test::worker_count_name);

// Destroying a shared mutex that a thread waits for: reported, then std::abort(). The test waits
// until the writer has queued (a queued writer makes try_lock_shared() fail), then destroys it.
void destroy_with_a_waiting_writer() {
    auto* m = new fj::shared_mutex;
    m->lock_shared();
    std::thread writer([m] { m->lock(); });
    while (m->try_lock_shared()) {
        m->unlock_shared();
        // A pause: a tight loop of read-modify-writes on the word could keep failing the
        // writer's compare-exchange that queues it (a long time under a sanitizer).
        std::this_thread::sleep_for(1ms);
    }
    delete m;
    writer.join(); // not reached
}

class fj_shared_mutex_DeathTest : public fj_test::guarded_test {
protected:
    void SetUp() override { ::testing::FLAGS_gtest_death_test_style = "threadsafe"; }
};

TEST_F(fj_shared_mutex_DeathTest, destroying_it_with_a_waiter_aborts_with_a_message) {
    EXPECT_DEATH(destroy_with_a_waiting_writer(),
                 "fj::shared_mutex destroyed while a task or thread waits for it");
}

} // namespace
