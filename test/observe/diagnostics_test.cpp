// What a stalled run prints: the statistics snapshot carries each worker's deque length and
// whether it sleeps, plus the scheduler's state, and the progress watchdog prints it before it
// aborts a run that stopped making progress.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <sstream>
#include <string>
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
