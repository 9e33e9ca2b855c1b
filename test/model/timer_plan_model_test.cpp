// The timers' handshake (runtime/src/timers/timer_plan.hpp) under Relacy: the timer thread, which
// scans the shards, fires what is due, plans its sleep and re-reads the shards' fronts, against
// threads that arm an entry into a shard and poke the timer thread when their deadline is earlier
// than its plan. The property: no entry is left armed while the timer thread sleeps past its
// deadline (a lost poke). The steps are those of timers.cpp (run(), arm(), fire_due()); the clock
// is frozen after every deadline, so a timer thread that plans an armed entry's deadline loops
// at once, and one that plans "no deadline" sleeps until poked. docs/design/timers.md#model says
// what is covered and what is not.
#include "model/model_support.hpp"
#include "timers/timer_plan.hpp"

#include <array>

namespace {

using fj::detail::k_no_deadline;
using fj::detail::timer_ticks;
using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using front = fj::detail::basic_timer_front<relacy_atomics>;
using plan = fj::detail::basic_timer_plan<relacy_atomics>;

constexpr timer_ticks k_now = 100; // the frozen clock: every deadline below has passed

template <std::size_t Shards>
struct timer_state {
    std::array<front, Shards> fronts;
    std::array<rl::mutex, Shards> mutexes;
    std::array<int, Shards> armed{}; // entries armed in each shard, under its mutex
    plan timer_plan;
    relacy_atomics::atomic<bool> poked{false}; // the sleep mutex's flag (timers::poke())
    int fired = 0;                             // the timer thread's own count

    // timers::arm(): the entry and its front under the shard's mutex, then the plan.
    void arm(std::size_t shard, timer_ticks deadline) {
        mutexes[shard].lock($);
        ++armed[shard];
        fronts[shard].publish(deadline); // the only entry: the new front
        mutexes[shard].unlock($);
        if (timer_plan.must_poke(deadline))
            poked.store(true, std::memory_order_seq_cst);
    }

    // timers::fire_due(): every entry due, then the front.
    void fire_due(std::size_t shard) {
        mutexes[shard].lock($);
        fired += armed[shard];
        armed[shard] = 0;
        fronts[shard].publish(k_no_deadline);
        mutexes[shard].unlock($);
    }

    // timers::run() until `expected` entries have fired. A plan of a passed deadline loops at
    // once (wait_until returns); a plan of none waits for a poke: spinning here forever is the
    // lost poke, which Relacy reports as a livelock.
    void run_timer_thread(int expected) {
        while (fired < expected) {
            timer_plan.start_looking();
            timer_ticks next = k_no_deadline;
            for (std::size_t s = 0; s < Shards; ++s) {
                if (fronts[s].hint() <= k_now)
                    fire_due(s);
                next = std::min(next, fronts[s].hint());
            }
            if (!timer_plan.settle(next, fronts))
                continue;
            if (next == k_no_deadline && fired < expected) {
                while (!poked.load(std::memory_order_seq_cst))
                    rl::yield(1, $);
            }
            poked.store(false, std::memory_order_seq_cst);
        }
    }
};

// One arm against the timer thread from its start (plan: looking), through its first sleep.
struct one_arm_scenario : rl::test_suite<one_arm_scenario, 2> {
    timer_state<1> s;

    void thread(unsigned index) {
        if (index == 0)
            s.run_timer_thread(1);
        else
            s.arm(0, 10);
    }

    void after() { RL_ASSERT(s.fired == 1); }
};

// Two threads arm into two shards; the timer thread has slept once already (its plan: none).
struct two_shards_scenario : rl::test_suite<two_shards_scenario, 3> {
    timer_state<2> s;

    void before() { s.timer_plan.settle(k_no_deadline, s.fronts); }

    void thread(unsigned index) {
        if (index == 0)
            s.run_timer_thread(2);
        else
            s.arm(index - 1, index == 1 ? 20 : 10);
    }

    void after() { RL_ASSERT(s.fired == 2); }
};

constexpr fj::model::search k_full{rl::sched_full};
constexpr fj::model::search k_bounded{rl::sched_bound, 3};

TEST(timer_plan_model, an_arm_against_the_timer_threads_first_looks) {
    const fj::model::outcome result = fj::model::check<one_arm_scenario>(k_full);
    FJ_EXPECT_MODEL_PASSES(result);
}

TEST(timer_plan_model, arms_into_two_shards_against_a_sleeping_timer_thread) {
    const fj::model::outcome result = fj::model::check<two_shards_scenario>(k_bounded);
    FJ_EXPECT_MODEL_PASSES(result);
}

// Each weakened order below is rejected: the store-buffering outcome (the arm reads a plan from
// before the timer thread's, the timer thread re-reads a front from before the arm's) leaves the
// entry armed while the timer thread sleeps without a deadline.
class timer_plan_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(timer_plan_mutants, are_rejected) {
    const fj::model::outcome result = fj::model::check<one_arm_scenario>(k_full, GetParam().change);
    FJ_EXPECT_MODEL_REJECTS(result);
}

constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto seq_cst = std::memory_order::seq_cst;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, timer_plan_mutants,
    testing::Values(
        // The arm's side: its store of the front, its load of the plan.
        mutant{"publish_release", {"publish", access::store, seq_cst, release}},
        mutant{"must_poke_acquire", {"must_poke", access::load, seq_cst, acquire}},
        // The timer thread's side: its store of the plan, its re-read of the fronts.
        mutant{"settle_store_release", {"settle", access::store, seq_cst, release}},
        mutant{"settle_reread_acquire", {"earliest", access::load, seq_cst, acquire}}),
    fj::model::mutant_name);

} // namespace
