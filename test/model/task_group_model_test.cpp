// The task group's count (runtime/include/forkjoin/detail/group_task.hpp, finish_one(), and
// runtime/src/waits/group_wait.hpp, the waiter's side) under Relacy: two tasks end while the
// waiter waits; the waiter is woken exactly once, after the last task's end, or finds the count
// at zero, never sleeps forever, and sees what the tasks wrote. docs/design/task-group.md#model
// says what is covered and what is not.
#include "model/model_support.hpp"
#include "waits/group_wait.hpp"

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using group_state = fj::detail::basic_group_state<relacy_atomics>;
using completion = fj::detail::basic_completion<relacy_atomics>;

// The waiter's record on its completion, as the runtime's waits register one.
struct record : fj::detail::waiter {
    fj::model::relacy_atomic<int> signalled{0};
    int wakes = 0; // checked after the threads join
    const int* ended = nullptr;

    static void wake(fj::detail::waiter* w) noexcept {
        auto* self = static_cast<record*>(w);
        RL_ASSERT(*self->ended == 2); // only the last task's end wakes the waiter
        ++self->wakes;
        self->signalled.store(1, std::memory_order_release);
    }
};

// Thread 0 waits for the group; threads 1 and 2 are its two tasks (run() has counted them before
// the scenario starts): each writes its effect and ends.
struct group_scenario : rl::test_suite<group_scenario, 3> {
    group_state group{nullptr};
    rl::var<int> effects[2];
    int ended = 0; // tasks past their effect, as their finish_one() begins
    record waiter;
    bool waited = false;

    void before() { group.m_word.store(2 * group_state::k_one, std::memory_order_relaxed); }

    void thread(unsigned index) {
        if (index != 0) {
            effects[index - 1]($) = 1;
            ++ended;
            fj::detail::finish_one(group);
            return;
        }
        waiter.m_wake = &record::wake;
        waiter.ended = &ended;
        fj::detail::wait_for_group_tasks(group, [&](completion& woken) {
            waited = true;
            if (!woken.try_register(&waiter))
                return; // finished already
            while (waiter.signalled.load(std::memory_order_acquire) == 0)
                relacy_atomics::yield_thread();
        });
        RL_ASSERT(effects[0]($) == 1);
        RL_ASSERT(effects[1]($) == 1);
    }

    void after() {
        RL_ASSERT(waiter.wakes <= 1);
        RL_ASSERT(group.m_word.load(std::memory_order_relaxed) == 0);
    }
};

constexpr fj::model::search k_full{rl::sched_full};

TEST(task_group_model, two_task_ends_against_the_wait) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<group_scenario>(k_full));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto acq_rel = std::memory_order::acq_rel;

// Each weakened order below is rejected: the waiter reads a task's effect unordered. The other
// orders of the count (the task's CAS, the acquire half of its fetch_sub, the waiter's fetch_or
// and CAS) order the waiter's m_waiter, a plain pointer the model does not check as data
// (docs/design/task-group.md#model).
class task_group_mutants : public testing::TestWithParam<mutant> {};

TEST_P(task_group_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<group_scenario>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, task_group_mutants,
    testing::Values(
        // A task's end does not publish its effect: the other task's end and the wake pass on
        // nothing of it.
        mutant{"end_fetch_sub_relaxed",
               {"finish_one", access::read_modify_write, acq_rel, relaxed}},
        // The waiter that finds the count at zero does not acquire the tasks' effects.
        mutant{"wait_load_relaxed", {"wait_for_group_tasks", access::load, acquire, relaxed}}),
    fj::model::mutant_name);

} // namespace
