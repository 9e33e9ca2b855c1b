// Split and continue (algorithms/include/forkjoin/detail/split_and_continue.hpp) under Relacy:
// exactly one of the continuing and the independent path runs, once; the continuing path sees the
// left half's writes; the caller sees both after the join. The join underneath is a small one of
// this test's own, so the right side runs either on a second modelled thread (stolen, while the
// left half may still run) or on the caller after the left half (popped back).
// docs/design/split-and-continue.md#model says what is covered and what is not.
#include "model/model_support.hpp"

#include <relacy/backoff.hpp>
#include <type_traits>

#include <forkjoin/detail/split_and_continue.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

// Which path each execution took, over a whole search: a scenario that never takes one of them
// checks nothing about it.
int g_continued_runs = 0;
int g_beside_runs = 0;

// A join over two modelled threads: the caller offers the right side, runs the left one, then
// takes the right side back if nobody has, or waits for the thread that took it. Its own
// synchronisation orders the offer before the thief's run and the thief's run before the join's
// return, and nothing from the left side to the right side: that edge is the protocol's.
class model_join {
public:
    template <class A, class B>
    void join(A&& a, B&& b) {
        m_right = &b;
        m_run = [](void* right) { (*static_cast<std::remove_reference_t<B>*>(right))(); };
        m_state.store(k_offered, rl::mo_release, $);
        a();
        int expected = k_offered;
        if (m_state.compare_exchange_strong(expected, k_popped, rl::mo_acq_rel, $)) {
            b();
        } else {
            while (!m_done.load(rl::mo_acquire, $))
                rl::yield(1, $);
        }
    }

    // The other thread: takes the right side if it is offered and not taken back yet.
    void try_steal() {
        int expected = k_offered;
        if (m_state.load(rl::mo_relaxed, $) == k_offered &&
            m_state.compare_exchange_strong(expected, k_stolen, rl::mo_acq_rel, $)) {
            m_run(m_right);
            m_done.store(true, rl::mo_release, $);
        }
    }

private:
    static constexpr int k_none = 0;
    static constexpr int k_offered = 1;
    static constexpr int k_popped = 2;
    static constexpr int k_stolen = 3;
    rl::atomic<int> m_state{k_none};
    rl::atomic<bool> m_done{false};
    void* m_right = nullptr;        // written before the offer, read after taking it
    void (*m_run)(void*) = nullptr; // likewise
};

// The left half writes a carry; the continuing path reads it and goes on from it, the
// independent path only sums its own part. The caller reads what the path taken left behind.
struct split_scenario : rl::test_suite<split_scenario, 2> {
    model_join sched;
    rl::var<int> carry;
    rl::var<int> result;
    rl::var<int> own_sum;
    rl::var<int> continued;
    rl::var<int> beside;

    void before() {
        carry($) = 0;
        result($) = 0;
        own_sum($) = 0;
        continued($) = 0;
        beside($) = 0;
    }

    void thread(unsigned index) {
        if (index == 1) {
            sched.try_steal();
            return;
        }
        fj::detail::split_and_continue<relacy_atomics>(
            sched, [&] { carry($) = 10; },
            [&] {
                RL_ASSERT(carry($) == 10);
                result($) = carry($) + 5;
                continued($) = continued($) + 1;
            },
            [&] {
                own_sum($) = 5;
                beside($) = beside($) + 1;
            });
        // After the join: the carry, and what the path taken left behind.
        RL_ASSERT(carry($) == 10);
        RL_ASSERT(continued($) + beside($) == 1);
        if (continued($) == 1) {
            RL_ASSERT(result($) == 15);
            ++g_continued_runs;
        } else {
            RL_ASSERT(carry($) + own_sum($) == 15);
            ++g_beside_runs;
        }
    }
};

constexpr fj::model::search k_search{rl::sched_full};

TEST(split_and_continue_model, one_path_runs_and_the_continuing_one_sees_the_left_half) {
    g_continued_runs = 0;
    g_beside_runs = 0;
    FJ_EXPECT_MODEL_PASSES(fj::model::check<split_scenario>(k_search));
    EXPECT_GT(g_continued_runs, 0) << "no execution took the continuing path";
    EXPECT_GT(g_beside_runs, 0) << "no execution took the independent path";
}

// Each weakened order below is rejected: the continuing path reads the carry with no
// happens-before edge from the left half's write (a data race).
class split_and_continue_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(split_and_continue_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<split_scenario>(k_search, GetParam().change));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, split_and_continue_mutants,
    testing::Values(
        mutant{"left_done_store_relaxed", {"split_and_continue", access::store, release, relaxed}},
        mutant{"left_done_load_relaxed", {"split_and_continue", access::load, acquire, relaxed}}),
    fj::model::mutant_name);

} // namespace
