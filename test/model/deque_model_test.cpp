// The Chase–Lev deque (runtime/include/forkjoin/detail/chase_lev_deque.hpp) under Relacy: every
// pushed item is taken exactly once, by the owner's pop() or a thief's steal(), and whoever takes
// it sees what the owner wrote before the push. Capacity 2, so the scenarios reach growth and the
// ring's wrap-around. docs/design/deque.md#model says what is covered and what is not.
#include "model/model_support.hpp"

#include <forkjoin/detail/chase_lev_deque.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

// An item the owner fills in before pushing it; its payload is a plain (Relacy-checked) variable,
// so a taker that reads it without the push's publication is a data race.
struct item {
    rl::var<int> payload;
    int taken = 0; // checked after the threads join
};

template <int Items, int Thieves, int Steals>
struct deque_scenario : rl::test_suite<deque_scenario<Items, Thieves, Steals>, 1 + Thieves> {
    fj::detail::chase_lev_deque<item*, relacy_atomics> deque{2};
    item items[Items];

    void take(item* it) {
        const int expected = static_cast<int>(it - items) + 1;
        RL_ASSERT(it->payload($) == expected);
        ++it->taken;
    }

    void thread(unsigned index) {
        if (index == 0) {
            owner();
        } else {
            for (int i = 0; i < Steals; ++i) {
                item* out = nullptr;
                if (deque.steal(out) == fj::detail::steal_result::success)
                    take(out);
            }
        }
    }

    // Push two, pop one, push the rest: the third push wraps around the ring of two slots
    // or, with a thief behind, grows it.
    void owner() {
        int next = 0;
        auto push = [&] {
            items[next].payload($) = next + 1;
            deque.push(&items[next]);
            ++next;
        };
        push();
        if (Items > 1)
            push();
        if (item* it = deque.pop())
            take(it);
        while (next < Items)
            push();
        while (item* it = deque.pop())
            take(it);
    }

    void after() {
        for (item& it : items)
            RL_ASSERT(it.taken == 1);
    }
};

// Owner pushes four items into two slots (wrap-around, then growth) and pops, against a thief
// that steals twice. Preemption bound 3.
using growth_scenario = deque_scenario<4, 1, 2>;
// Owner pushes two and pops against two thieves: the owner-against-thief race for the last item
// and the thief-against-thief race for the oldest. Preemption bound 3.
using two_thieves_scenario = deque_scenario<2, 2, 1>;
constexpr fj::model::search k_search{rl::sched_bound, 3};

TEST(deque_model, one_thief_growth_and_wrap_around) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<growth_scenario>(k_search));
}

TEST(deque_model, two_thieves) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_thieves_scenario>(k_search));
}

// Each weakened order below is rejected: it loses exactly-once or the payload's publication.
class deque_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(deque_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<growth_scenario>(k_search, GetParam().change));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto seq_cst = std::memory_order::seq_cst;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, deque_mutants,
    testing::Values(
        // The push publishes the slot: without release a thief reads the payload unordered.
        mutant{"push_publishes_relaxed", {"push_with", access::store, release, relaxed}},
        // pop()'s StoreLoad pair: owner and thief both take the same item.
        mutant{"pop_bottom_store_release", {"::pop(", access::store, seq_cst, release}},
        mutant{"pop_top_load_acquire", {"::pop(", access::load, seq_cst, acquire}},
        mutant{"steal_loads_acquire", {"::steal(", access::load, seq_cst, acquire}},
        // The grown ring's publication: a thief reads a slot the copy has not yet filled.
        mutant{"grow_publishes_relaxed", {"::grow(", access::store, release, relaxed}}),
    fj::model::mutant_name);

} // namespace
