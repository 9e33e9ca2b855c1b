// The join of two coroutine branches (runtime/include/forkjoin/detail/branch_join.hpp, the end of
// an fj::task branch in coroutine_task.hpp) under Relacy, with the production Chase–Lev deque: the
// owner pushes the second branch's start and runs the first; a thief may steal the start. The
// parent is resumed exactly once, after both results are written and visible to the thread that
// resumes it, and the second branch runs exactly once. docs/design/coroutines.md#model says what
// is covered and what is not.
#include "model/model_support.hpp"

#include <forkjoin/detail/branch_join.hpp>
#include <forkjoin/detail/chase_lev_deque.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using branch_join = fj::detail::basic_branch_join<relacy_atomics>;

struct queued {}; // a task on the deque: the second branch's start, or a fork left behind

// LeftFork: the first branch forks a task it does not join, so its end finds that task on top
// instead of the second's start and must put it back. KeepsCount: the first branch's end takes
// the second back but leaves it counted (expected to be rejected: the parent is never resumed).
template <bool LeftFork, int Thieves, bool KeepsCount = false>
struct branch_join_scenario
    : rl::test_suite<branch_join_scenario<LeftFork, Thieves, KeepsCount>, 1 + Thieves> {
    fj::detail::chase_lev_deque<queued*, relacy_atomics> deque{2};
    branch_join join;
    queued second_start;
    queued left_fork;
    // Plain (Relacy-checked) variables: a read without the protocol's ordering is a data race.
    rl::var<int> first_result;
    rl::var<int> second_result;
    rl::var<bool> second_counted; // the second branch's m_join, cleared when it is taken back
    int second_runs = 0;          // checked after the threads join
    int parent_resumes = 0;

    void resume_parent() {
        RL_ASSERT(first_result($) == 1);
        RL_ASSERT(second_result($) == 2);
        ++parent_resumes;
    }

    void run_second() {
        second_result($) = 2;
        ++second_runs;
        if (!second_counted($) || join.end_counted())
            resume_parent();
    }

    void thread(unsigned index) {
        if (index != 0) {
            queued* out = nullptr;
            if (deque.steal(out) == fj::detail::steal_result::success && out == &second_start)
                run_second();
            return;
        }
        // The join's await_suspend: the second's start goes where a fork goes, the first runs.
        second_counted($) = true;
        deque.push(&second_start);
        if (LeftFork)
            deque.push(&left_fork);
        first_result($) = 1;
        // The first branch's end.
        if (branch_join::take_back_second(&deque, &second_start,
                                          [&](queued* top) { deque.push(top); })) {
            if (!KeepsCount)
                second_counted($) = false;
            run_second();
            return;
        }
        if (join.end_counted())
            resume_parent();
        // The worker loop runs what is left on the deque, the second's start among it.
        while (queued* next = deque.pop()) {
            if (next == &second_start)
                run_second();
        }
    }

    void after() {
        RL_ASSERT(second_runs == 1);
        RL_ASSERT(parent_resumes == 1);
    }
};

using one_thief = branch_join_scenario<false, 1>;
using fork_left_on_top = branch_join_scenario<true, 1>;
using two_thieves = branch_join_scenario<false, 2>;
using keeps_count = branch_join_scenario<false, 1, true>;

constexpr fj::model::search k_full{rl::sched_full};
constexpr fj::model::search k_bounded{rl::sched_bound, 3};

TEST(branch_join_model, a_thief_against_the_first_branchs_end) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<one_thief>(k_full));
}

TEST(branch_join_model, a_fork_left_on_top_of_the_second_branchs_start) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<fork_left_on_top>(k_bounded));
}

TEST(branch_join_model, two_thieves) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_thieves>(k_bounded));
}

TEST(branch_join_model, a_second_branch_taken_back_but_left_counted_is_caught) {
    EXPECT_FALSE(fj::model::check<keeps_count>(k_full).passed);
}

// Each weakened order below is rejected: the thread that resumes the parent reads the other
// branch's result unordered.
class branch_join_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(branch_join_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<one_thief>(k_full, GetParam().change));
}

constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto acq_rel = std::memory_order::acq_rel;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, branch_join_mutants,
    testing::Values(
        // Without the release a branch's result is not published to the last end.
        mutant{"end_acquire_only", {"end_counted", access::read_modify_write, acq_rel, acquire}},
        // Without the acquire the last end does not take the other branch's result.
        mutant{"end_release_only", {"end_counted", access::read_modify_write, acq_rel, release}}),
    fj::model::mutant_name);

} // namespace
