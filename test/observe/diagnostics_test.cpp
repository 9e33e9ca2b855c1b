// What a stalled run prints: the statistics snapshot carries each worker's deque length and
// whether it sleeps, plus the scheduler's state, and the progress watchdog prints it before it
// aborts a run that stopped making progress. The steal counters tell a look that stole from the
// idle looks around it.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(diagnostics, snapshot_shows_queued_tasks_and_sleeping_workers) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler pool(1);
    std::atomic<bool> release{false};
    std::atomic<bool> forked{false};
    auto holder = pool.submit([&] {
        std::vector<fj::future<int>> children;
        for (int i = 0; i < 3; ++i)
            children.push_back(fj::fork([i] { return i; }));
        forked = true;
        // Busy, not helping: the three children stay in this worker's deque.
        EXPECT_TRUE(fj_test::spin_until([&] { return release.load(); }));
        int sum = 0;
        for (auto& c : children)
            sum += c.get();
        return sum;
    });
    ASSERT_TRUE(fj_test::spin_until([&] { return forked.load(); }));
    const fj::scheduler_stats busy = pool.stats();
    EXPECT_EQ(busy.workers.at(0).queued, 3u);
    EXPECT_FALSE(busy.workers.at(0).asleep);
    EXPECT_FALSE(busy.closed);
    std::ostringstream text;
    text << busy;
    EXPECT_NE(text.str().find("deque=3 awake"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("scheduler: open"), std::string::npos) << text.str();

    release = true;
    EXPECT_EQ(fj_test::get_or(holder, -1), 3);
    // Idle: the worker goes to sleep after its spin.
    EXPECT_TRUE(fj_test::spin_until([&] { return pool.stats().workers.at(0).asleep; }));
    EXPECT_EQ(pool.stats().workers.at(0).queued, 0u);
}

// failed_before_steal counts only the failed probes of the look that stole: a worker that looked
// in vain for a long time (failed_steals counts those probes) and then stole from the only other
// worker, at its look's first probe, has none.
TEST(diagnostics, failed_probes_before_a_steal_are_those_of_the_stealing_look) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler pool(2);
    std::atomic<bool> waiting{false};
    std::atomic<bool> child_ran{false};
    std::atomic<int> finished{0};
    // Each worker's first look, at the other's empty deque, fails.
    ASSERT_TRUE(fj_test::spin_until([&] {
        const fj::scheduler_stats s = pool.stats();
        return s.workers.at(0).failed_steals != 0 && s.workers.at(1).failed_steals != 0;
    }));
    // One worker waits without blocking: its loop looks for work in between, in vain until the
    // child below is forked, and then steals it.
    auto waiter = pool.submit([&] {
        waiting = true;
        fj::reschedule_until([&] { return child_ran.load(); });
        ++finished;
    });
    auto forker = pool.submit([&] {
        EXPECT_TRUE(fj_test::spin_until([&] { return waiting.load(); }));
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the other looks meanwhile
        auto child = fj::fork([&child_ran] { child_ran = true; });
        // Busy, not helping: the child stays in this worker's deque for the other to steal.
        EXPECT_TRUE(fj_test::spin_until([&] { return child_ran.load(); }));
        child.get();
        ++finished;
    });
    // Not a get() yet: this thread would help while it waits, and could take the child itself.
    ASSERT_TRUE(fj_test::spin_until([&] { return finished.load() == 2; }));
    waiter.get();
    forker.get();
    const fj::scheduler_stats stats = pool.stats();
    ASSERT_EQ(stats.workers.size(), 2u);
    const auto thief = std::find_if(stats.workers.begin(), stats.workers.end(),
                                    [](const fj::worker_stats& w) { return w.steals != 0; });
    ASSERT_NE(thief, stats.workers.end()) << stats;
    EXPECT_GT(thief->failed_steals, 0u) << stats;
    for (const fj::worker_stats& w : stats.workers)
        EXPECT_EQ(w.failed_before_steal, 0u) << stats;
}

TEST(diagnostics_DeathTest, progress_watchdog_dumps_the_scheduler_state_on_a_stall) {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
    EXPECT_DEATH(
        {
            fj::scheduler pool(2);
            fj::scheduler other(1);
            fj_test::progress_watchdog dog("stalled run", std::chrono::seconds(1));
            auto watched = dog.watch(pool, "pool");
            auto watched_other = dog.watch(other, "other");
            dog.tick();
            std::this_thread::sleep_for(std::chrono::seconds(30));
        },
        "STALL: stalled run made no progress(.|\n)*--- pool \\(2 workers\\)(.|\n)*worker 1:(.|\n)*"
        "deque=0(.|\n)*scheduler: open(.|\n)*--- other \\(1 workers\\)");
}

} // namespace
