// The rescue monitor's arming (runtime/src/rescue/monitor_arming.hpp) under Relacy: the monitor
// disarms only while some worker is idle, and a wake-up that makes every worker busy re-arms it,
// so the monitor is never left disarmed with every worker busy (a lost arming). The waker's steps
// are those of the sleep protocol's wake-up (sleep.cpp: the seq_cst increment of m_active) and of
// rescuer::on_all_awake() and arm(). docs/design/rescue.md#model says what is covered and what is
// not.
#include "model/model_support.hpp"
#include "rescue/monitor_arming.hpp"

#include <relacy/backoff.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

constexpr std::size_t k_workers = 2;

// What the pool and the rescuer hold around the pair.
struct arming_state {
    fj::detail::basic_monitor_arming<relacy_atomics> arming;
    relacy_atomics::atomic<std::uint32_t> active{0};
    int notifies = 0; // wake-ups of the monitor (notify_one in arm())

    // A worker woken from the pool's event count counts itself active again (seq_cst) and, if
    // that made every worker busy, arms the monitor (on_all_awake(), arm()).
    void wake_up() {
        const std::uint32_t now = active.fetch_add(1, std::memory_order_seq_cst) + 1;
        if (now >= k_workers && arming.armed_wanted() && arming.arm())
            ++notifies;
    }

    // Never disarmed with every worker busy, and at most one notification per look (a look
    // sets the flag at most once; a waker may arm a look that then withdraws its disarm).
    void check_not_lost(int looks) {
        RL_ASSERT(!(arming.disarmed() && active.load(std::memory_order_relaxed) >= k_workers));
        RL_ASSERT(notifies <= looks);
    }
};

// Both workers asleep: the monitor looks once (step 2) while the two wake up; the second makes
// every worker busy.
struct wake_ups_scenario : rl::test_suite<wake_ups_scenario, 3> {
    arming_state s;

    void thread(unsigned index) {
        if (index == 0)
            (void)s.arming.disarm_if_some_idle(s.active, k_workers);
        else
            s.wake_up();
    }

    void after() { s.check_not_lost(1); }
};

// Both workers busy; one goes to sleep and wakes up again, while the monitor looks, waits while
// disarmed (its condition variable: here a wait for the flag to clear, which never ends if the
// arming is lost) and looks again.
struct sleep_and_wake_scenario : rl::test_suite<sleep_and_wake_scenario, 2> {
    arming_state s;

    void before() { s.active.store(k_workers, std::memory_order_relaxed); }

    void thread(unsigned index) {
        if (index == 0) {
            for (int look = 0; look < 2; ++look) {
                if (s.arming.disarm_if_some_idle(s.active, k_workers)) {
                    while (s.arming.disarmed())
                        rl::yield(1, $);
                }
            }
        } else {
            s.active.fetch_sub(1, std::memory_order_seq_cst); // goes idle (sleep.cpp)
            s.wake_up();
        }
    }

    void after() { s.check_not_lost(2); }
};

// Every interleaving: both scenarios are small enough.
constexpr fj::model::search k_search{rl::sched_full};

TEST(rescue_arming_model, monitor_against_wake_ups) {
    const fj::model::outcome result = fj::model::check<wake_ups_scenario>(k_search);
    FJ_EXPECT_MODEL_PASSES(result);
}

TEST(rescue_arming_model, monitor_against_a_sleep_and_wake_up) {
    const fj::model::outcome result = fj::model::check<sleep_and_wake_scenario>(k_search);
    FJ_EXPECT_MODEL_PASSES(result);
}

// Each weakened order below is rejected: the store-buffering outcome (the monitor misses the
// increment, the waker misses the flag) leaves the monitor disarmed with every worker busy.
class rescue_arming_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(rescue_arming_mutants, are_rejected) {
    const fj::model::outcome result =
        fj::model::check<wake_ups_scenario>(k_search, GetParam().change);
    FJ_EXPECT_MODEL_REJECTS(result);
}

constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto seq_cst = std::memory_order::seq_cst;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, rescue_arming_mutants,
    testing::Values(
        // The monitor's side: its store of the flag, or its loads of m_active.
        mutant{"disarm_store_release", {"disarm_if_some_idle", access::store, seq_cst, release}},
        mutant{"disarm_load_acquire", {"disarm_if_some_idle", access::load, seq_cst, acquire}},
        // The waker's side: its load of the flag.
        mutant{"waker_load_acquire", {"armed_wanted", access::load, seq_cst, acquire}}),
    fj::model::mutant_name);

} // namespace
