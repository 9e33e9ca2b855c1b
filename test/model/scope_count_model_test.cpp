// fj::task_scope's count (runtime/include/forkjoin/detail/scope_count.hpp, used by task_scope.hpp
// and runtime/src/sync/report.cpp) under Relacy: the parent spawns two children and joins them
// while they run and end on threads of their own. The parent is resumed exactly once, by its own
// join or by the last child, after both children's writes, which it reads without a race; a
// failing child's exception is kept by one child only. docs/design/coroutines.md#model says
// what is covered and what is not.
#include "model/model_support.hpp"

#include <forkjoin/detail/scope_count.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using scope_count = fj::detail::basic_scope_count<relacy_atomics>;

// Failing: how many of the two children fail (the first ones). Miscounted: the parent counts a
// third child that it never queues, so its join waits for an end that never comes (expected to
// be rejected: the parent is never resumed).
template <int Failing, bool Miscounted = false>
struct scope_scenario : rl::test_suite<scope_scenario<Failing, Miscounted>, 3> {
    scope_count count;
    // The queue that starts a child: its push publishes what the parent wrote before (release),
    // the worker that takes it acquires.
    fj::model::relacy_atomic<int> started[2];
    // Plain (Relacy-checked) variables: a read without the protocol's ordering is a data race.
    rl::var<int> results[2];
    rl::var<int> kept_error;    // the scope's m_error: the first failing child's number
    rl::var<int> parent_handle; // the scope's m_parent, written by the join
    int resumes = 0;            // checked after the threads join

    void before() {
        for (auto& s : started)
            s.store(0, std::memory_order_relaxed);
    }

    // The parent after its join: reads what the children wrote, and the kept exception.
    void resume_parent() {
        RL_ASSERT(results[0]($) == 1);
        RL_ASSERT(results[1]($) == 2);
        if (count.take_failure())
            RL_ASSERT(kept_error($) >= 1 && kept_error($) <= Failing);
        else
            RL_ASSERT(Failing == 0);
        count.rejoin();
        ++resumes;
    }

    void thread(unsigned index) {
        if (index == 0) {
            parent();
            return;
        }
        const int child = static_cast<int>(index) - 1;
        while (started[child].load(std::memory_order_acquire) == 0)
            relacy_atomics::yield_thread();
        results[child]($) = child + 1;
        if (child < Failing && count.elect_first_failure())
            kept_error($) = child + 1;
        if (count.child_leaves()) {
            RL_ASSERT(parent_handle($) == 1);
            resume_parent();
        }
    }

    void parent() {
        for (auto& s : started) { // spawn(): count the child, then queue its start
            count.add_child();
            s.store(1, std::memory_order_release);
        }
        if (Miscounted)
            count.add_child();
        // co_await join(): no suspension if both have ended, else suspend and leave.
        if (count.all_ended()) {
            resume_parent();
            return;
        }
        parent_handle($) = 1;
        if (!count.parent_leaves())
            resume_parent();
    }

    void after() { RL_ASSERT(resumes == 1); }
};

using no_failure = scope_scenario<0>;
using both_fail = scope_scenario<2>;
using miscounted = scope_scenario<0, true>;

constexpr fj::model::search k_bounded{rl::sched_bound, 3};

TEST(scope_count_model, two_children_against_the_join) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<no_failure>(k_bounded));
}

TEST(scope_count_model, two_failing_children_keep_one_exception) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<both_fail>(k_bounded));
}

TEST(scope_count_model, a_child_counted_but_never_queued_is_caught) {
    EXPECT_FALSE(fj::model::check<miscounted>(k_bounded).passed);
}

// Each weakened order below is rejected: the thread that resumes the parent reads a child's write
// (or the parent's handle) unordered.
class scope_count_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(scope_count_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<both_fail>(k_bounded, GetParam().change));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto acq_rel = std::memory_order::acq_rel;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, scope_count_mutants,
    testing::Values(
        // A child's end that does not publish its write to the last one.
        mutant{"child_end_acquire_only",
               {"child_leaves", access::read_modify_write, acq_rel, acquire}},
        // The last child's end that does not take the other's write.
        mutant{"child_end_release_only",
               {"child_leaves", access::read_modify_write, acq_rel, release}},
        // A join that does not publish the parent's handle to the last child.
        mutant{"join_acquire_only", {"parent_leaves", access::read_modify_write, acq_rel, acquire}},
        // A join that is last but does not take the children's writes.
        mutant{"join_release_only", {"parent_leaves", access::read_modify_write, acq_rel, release}},
        // A join that finds both ended but reads their writes unordered.
        mutant{"ready_check_relaxed", {"all_ended", access::load, acquire, relaxed}}),
    fj::model::mutant_name);

} // namespace
