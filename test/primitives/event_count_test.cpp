// fj::detail::event_count: the prepare / re-check / cancel-or-commit recipe never loses a wake-up,
// cancel_wait() leaves nothing behind, and notifications are not sticky.
#include "state/event_count.hpp"
#include "support.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace {

// An event count with a state word of its own (a pool keeps the word in its public part).
struct word_holder {
    fj::detail::sleep_word word;
};
struct event_count : private word_holder, public fj::detail::event_count {
    event_count() : fj::detail::event_count(word) {}
};
using namespace std::chrono_literals;

class event_count_test : public fj_test::guarded_test {};

// A thread that prepares, signals it has prepared, then commits, recording when it wakes.
struct sleeper {
    explicit sleeper(event_count& ec)
        : thread([this, &ec] {
              (void)ec.prepare_wait();
              prepared.store(true);
              ec.commit_wait();
              woke.store(true);
          }) {}
    ~sleeper() { thread.join(); }
    std::atomic<bool> prepared{false};
    std::atomic<bool> woke{false};
    std::thread thread;
};

// `n` sleepers, once each has prepared; none if one had not prepared within the wait's bound.
std::vector<std::unique_ptr<sleeper>> prepared_sleepers(event_count& ec, int n) {
    std::vector<std::unique_ptr<sleeper>> sleepers;
    for (int i = 0; i < n; ++i)
        sleepers.push_back(std::make_unique<sleeper>(ec));
    const bool all = fj_test::spin_until([&] {
        for (auto& s : sleepers)
            if (!s->prepared.load())
                return false;
        return true;
    });
    if (!all) {
        ec.notify_all(); // let them end before they are joined
        sleepers.clear();
    }
    return sleepers;
}

// has_waiters() is true exactly between prepare_wait() and cancel_wait().
TEST_F(event_count_test, CancelPathLeavesNoWaiter) {
    event_count ec;
    EXPECT_FALSE(ec.has_waiters());
    (void)ec.prepare_wait();
    EXPECT_TRUE(ec.has_waiters());
    (void)ec.prepare_wait();
    ec.cancel_wait();
    EXPECT_TRUE(ec.has_waiters()); // one of the two is still waiting
    ec.cancel_wait();
    EXPECT_FALSE(ec.has_waiters());
}

// A notify between prepare_wait() and commit_wait() makes the commit return at once (the wake-up
// is not lost because the sleeper had not reached the condition variable yet).
TEST_F(event_count_test, NotifyAfterPrepareReleasesCommit) {
    event_count ec;
    (void)ec.prepare_wait();
    ec.notify_one();
    ec.commit_wait(); // would block forever (watchdog) if the notify were lost
    EXPECT_FALSE(ec.has_waiters());
}

// commit_wait() blocks until a notify; notify_one() then wakes the sleeper.
TEST_F(event_count_test, CommitBlocksUntilNotified) {
    event_count ec;
    sleeper s(ec);
    ASSERT_TRUE(fj_test::spin_until([&] { return s.prepared.load(); }));
    std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(s.woke.load()) << "commit_wait() returned without a notify";
    ec.notify_one();
    EXPECT_TRUE(fj_test::spin_until([&] { return s.woke.load(); })) << "notify_one() lost";
}

// Notifications are not sticky: a notify with nobody waiting, or one consumed by a waiter that
// then cancelled, does not release a later prepare/commit.
TEST_F(event_count_test, NotifyIsNotStickyAcrossCancel) {
    event_count ec;
    ec.notify_one(); // nobody waiting: a no-op
    ec.notify_all();
    (void)ec.prepare_wait();
    ec.notify_one(); // a ticket for the waiter below...
    EXPECT_TRUE(ec.cancel_wait()) << "the last waiter left a ticket behind"; // ...which it takes
    EXPECT_FALSE(ec.has_waiters());

    sleeper s(ec);
    ASSERT_TRUE(fj_test::spin_until([&] { return s.prepared.load(); }));
    std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(s.woke.load()) << "a stale notification released a later waiter";
    ec.notify_one();
    EXPECT_TRUE(fj_test::spin_until([&] { return s.woke.load(); }));
}

// A notify releases one waiter, not every thread between prepare and commit: of three waiters that
// prepared before it, one leaves woken and two stay; each further notify releases one more.
TEST_F(event_count_test, NotifyOneReleasesExactlyOne) {
    event_count ec;
    std::vector<std::unique_ptr<sleeper>> sleepers = prepared_sleepers(ec, 3);
    ASSERT_EQ(sleepers.size(), 3u);
    const auto woken = [&] {
        int n = 0;
        for (auto& s : sleepers)
            n += s->woke.load() ? 1 : 0;
        return n;
    };
    for (int expected = 1; expected <= 3; ++expected) {
        ec.notify_one();
        ASSERT_TRUE(fj_test::spin_until([&] { return woken() >= expected; }));
        std::this_thread::sleep_for(20ms);
        EXPECT_EQ(woken(), expected) << "one notify released more than one waiter";
    }
    sleepers.clear();
    EXPECT_FALSE(ec.has_waiters());
}

// A waiter whose deadline passes while a ticket is left for it takes the ticket: the wake-up is
// not stranded in the word with nobody counted to take it.
TEST_F(event_count_test, TimedWaitTakesTheTicketItWasGiven) {
    event_count ec;
    (void)ec.prepare_wait();
    ec.notify_one();
    EXPECT_TRUE(ec.commit_wait_until(std::chrono::steady_clock::now() - 1ms));
    EXPECT_FALSE(ec.has_waiters());
    (void)ec.prepare_wait();
    EXPECT_FALSE(ec.commit_wait_until(std::chrono::steady_clock::now() + 5ms));
    EXPECT_FALSE(ec.has_waiters());
}

// notify_all() wakes every committed waiter.
TEST_F(event_count_test, NotifyAllWakesEveryWaiter) {
    event_count ec;
    std::vector<std::unique_ptr<sleeper>> sleepers = prepared_sleepers(ec, 4);
    ASSERT_EQ(sleepers.size(), 4u);
    ec.notify_all();
    for (auto& s : sleepers)
        EXPECT_TRUE(fj_test::spin_until([&] { return s->woke.load(); }));
    sleepers.clear();
    EXPECT_FALSE(ec.has_waiters());
}

// No lost wake-up under random producer/consumer interleavings: consumers following the recipe
// in event_count.hpp take every item, and none sleeps forever while an item is available. A
// watchdog catches a sleeper that missed its wake-up and rescues it with notify_all() so the test
// fails instead of hanging.
TEST_F(event_count_test, NoLostWakeupUnderRandomProducersAndConsumers) {
    constexpr int producers = 2;
    constexpr int consumers = 3;
    const int per_producer = static_cast<int>(fj_test::scaled(20'000));
    const int total = producers * per_producer;

    event_count ec;
    std::atomic<int> available{0}; // the "queue": a count of items
    std::atomic<int> taken{0};
    std::atomic<int> sleeps{0};
    std::atomic<bool> rescue{false};

    const auto try_take = [&] {
        int n = available.load();
        while (n > 0)
            if (available.compare_exchange_weak(n, n - 1))
                return true;
        return false;
    };

    std::vector<std::thread> threads;
    for (int c = 0; c < consumers; ++c) {
        threads.emplace_back([&] {
            for (;;) {
                if (try_take()) {
                    // The consumer that takes the last item wakes the others so they can leave.
                    if (taken.fetch_add(1) + 1 == total)
                        ec.notify_all();
                    continue;
                }
                if (taken.load() == total || rescue.load())
                    return;
                // The recipe: prepare, re-check every source of work, then cancel or commit.
                (void)ec.prepare_wait();
                if (available.load() > 0 || taken.load() == total || rescue.load()) {
                    (void)ec.cancel_wait();
                    continue;
                }
                sleeps.fetch_add(1);
                ec.commit_wait();
            }
        });
    }
    for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&, p] {
            fj_test::rng random(static_cast<std::uint64_t>(p) + 1);
            for (int i = 0; i < per_producer; ++i) {
                // Random pauses let consumers run dry and go to sleep between items.
                const std::size_t pause = random.below(8);
                if (pause == 0)
                    std::this_thread::yield();
                else if (pause == 1)
                    std::this_thread::sleep_for(std::chrono::microseconds(random.below(50)));
                available.fetch_add(1); // publish (seq_cst RMW), then notify
                ec.notify_one();
            }
        });
    }

    // The watchdog: all items must be taken by the deadline.
    const bool finished = fj_test::spin_until([&] { return taken.load() == total; });
    if (!finished) {
        rescue.store(true);
        // Keep notifying until every consumer has left.
        std::atomic<bool> joined{false};
        std::thread rescuer([&] {
            while (!joined.load()) {
                ec.notify_all();
                std::this_thread::sleep_for(1ms);
            }
        });
        for (auto& t : threads)
            t.join();
        joined.store(true);
        rescuer.join();
    } else {
        for (auto& t : threads)
            t.join();
    }
    EXPECT_TRUE(finished) << "lost wake-up: " << total - taken.load() << " of " << total
                          << " items were left while consumers slept (available = "
                          << available.load() << ")";
    EXPECT_EQ(available.load(), 0);
    EXPECT_FALSE(ec.has_waiters());
    RecordProperty("sleeps", sleeps.load());
}

} // namespace

// The pool's wake policy on the word itself (docs/design/sleep.md#searching).
class sleep_word_test : public fj_test::guarded_test {};

// A wake-up goes to a sleeper only while nobody searches, and brings a searching place with it.
TEST_F(sleep_word_test, a_wake_up_is_given_only_while_nobody_searches) {
    fj::detail::sleep_word word;
    EXPECT_FALSE(word.give_ticket_unless_searching()) << "a ticket with nobody counted";
    (void)word.prepare_wait(); // one sleeper
    (void)word.prepare_wait(); // and another
    ASSERT_TRUE(word.try_start_searching(4));
    EXPECT_FALSE(word.give_ticket_unless_searching()) << "woke a sleeper beside a searcher";
    (void)word.stop_searching();
    EXPECT_TRUE(word.give_ticket_unless_searching());
    EXPECT_EQ(word.searching(), 1u) << "the ticket brings a searching place";
    EXPECT_FALSE(word.give_ticket_unless_searching()) << "a second wake-up while one is on its way";
    EXPECT_TRUE(word.try_take_ticket());
    EXPECT_FALSE(word.try_take_ticket()) << "one wake-up released two sleepers";
    EXPECT_EQ(word.waiters(), 1u);
    EXPECT_EQ(word.searching(), 1u) << "the woken thread holds the place";
    (void)word.stop_searching();
    EXPECT_EQ(word.searching(), 0u);
    EXPECT_FALSE(word.cancel_wait()) << "no ticket left to take";
    EXPECT_FALSE(word.has_waiters());
}

// At most half of the awake workers search.
TEST_F(sleep_word_test, at_most_half_of_the_awake_workers_search) {
    fj::detail::sleep_word word;
    int started = 0;
    while (word.try_start_searching(8))
        ++started;
    EXPECT_EQ(started, 4);
    for (int i = 0; i < 4; ++i)
        (void)word.stop_searching();
    for (int i = 0; i < 6; ++i)
        (void)word.prepare_wait(); // 6 of the 8 asleep: 2 awake
    started = 0;
    while (word.try_start_searching(8))
        ++started;
    EXPECT_EQ(started, 1);
}

// A thread leaving without sleeping takes a ticket when every thread counted holds one, so no
// ticket is left with nobody to take it.
TEST_F(sleep_word_test, the_last_thread_to_leave_takes_the_ticket_left_for_it) {
    fj::detail::sleep_word word;
    (void)word.prepare_wait();
    (void)word.prepare_wait();
    ASSERT_TRUE(word.give_ticket());
    EXPECT_FALSE(word.cancel_wait()) << "took the ticket the other thread can still take";
    EXPECT_TRUE(word.cancel_wait()) << "left a ticket with nobody counted";
    EXPECT_FALSE(word.has_waiters());
    EXPECT_FALSE(word.try_take_ticket());
}
