// fj::detail::completion's start / cancel race (docs/design/cancel.md): whatever the timing,
// exactly one of try_start() and cancel() wins, and a cancel() that lost leaves no trace. The
// asymmetric formulation (membarrier) runs in release and ASan builds, the seq_cst one under TSan;
// the sequential cases pin down the meaning of each answer.
#include "support.hpp"

#include <atomic>
#include <barrier>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <forkjoin/detail/asymmetric_barrier.hpp>
#include <forkjoin/detail/completion.hpp>
#include <forkjoin/detail/cpu_relax.hpp>

namespace {

using fj::detail::completion;
using fj::detail::start_flag;

class completion_test : public fj_test::guarded_test {
protected:
    // What every scheduler's constructor does first: choose (and register) the barrier.
    void SetUp() override { (void)fj::detail::asymmetric_barrier_available(); }
};

TEST_F(completion_test, cancel_before_start_wins_and_the_task_is_skipped) {
    completion c;
    start_flag start;
    EXPECT_FALSE(c.is_ready());
    EXPECT_TRUE(c.cancel(start));
    EXPECT_TRUE(c.is_ready()); // ready at once, although the task is still queued
    EXPECT_TRUE(c.is_cancelled());
    EXPECT_FALSE(c.cancel(start));    // a second cancel changes nothing
    EXPECT_FALSE(c.try_start(start)); // the producer skips it
    EXPECT_FALSE(c.finish());         // (it stores task_cancelled and finishes as usual)
    EXPECT_TRUE(c.is_done());
    EXPECT_TRUE(c.detach()); // the consumer is second: it frees
}

TEST_F(completion_test, cancel_after_start_or_finish_fails_and_changes_nothing) {
    completion c;
    start_flag start;
    EXPECT_TRUE(c.try_start(start));
    EXPECT_FALSE(c.cancel(start));
    EXPECT_FALSE(c.is_ready());
    EXPECT_FALSE(c.finish());
    EXPECT_FALSE(c.cancel(start));
    EXPECT_TRUE(c.is_done());
    EXPECT_FALSE(c.is_cancelled());
    EXPECT_TRUE(c.detach());
}

// Both sides released together by a barrier, one of them after a random short spin so the two
// calls overlap at every offset, including the window between the producer's claim and its
// decision (where cancel() waits) and the one after it (where cancel() withdraws its flag).
TEST_F(completion_test, start_and_cancel_race_has_exactly_one_winner) {
    const std::size_t rounds = fj_test::scaled(20000);
    auto words = std::make_unique<completion[]>(rounds);
    auto starts = std::make_unique<start_flag[]>(rounds);
    std::vector<char> started(rounds), cancelled(rounds);
    std::barrier sync(2);
    auto spin = [](unsigned n) {
        for (unsigned i = 0; i < n; ++i)
            fj::detail::cpu_relax();
    };
    std::thread producer([&] {
        std::minstd_rand rng(1);
        for (std::size_t r = 0; r < rounds; ++r) {
            sync.arrive_and_wait();
            spin(rng() % 64);
            started[r] = words[r].try_start(starts[r]);
        }
    });
    std::minstd_rand rng(2);
    for (std::size_t r = 0; r < rounds; ++r) {
        sync.arrive_and_wait();
        spin(rng() % 64);
        cancelled[r] = words[r].cancel(starts[r]);
    }
    producer.join();
    std::size_t cancels_won = 0;
    for (std::size_t r = 0; r < rounds; ++r) {
        ASSERT_NE(started[r] != 0, cancelled[r] != 0) << "round " << r;
        // A lost cancel() withdrew its flag: the task is running, so the future is not ready.
        ASSERT_EQ(words[r].is_ready(), cancelled[r] != 0) << "round " << r;
        cancels_won += cancelled[r];
    }
    std::printf("cancel won %zu of %zu rounds (asymmetric barrier: %s)\n", cancels_won, rounds,
                fj::detail::asymmetric_barrier_registered() ? "yes" : "no");
}

} // namespace
