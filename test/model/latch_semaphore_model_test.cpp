// fj::latch's and fj::counting_semaphore's protocols (runtime/include/forkjoin/detail/
// latch_protocol.hpp, semaphore_protocol.hpp) under Relacy, with the wait written as a spin on the
// waiter's completion. Latch: two count-downs against a waiter that may find it open, re-check
// under the lock, or queue; the waiter reads what both wrote before counting down. Semaphore: a
// releaser of two tokens against an acquirer and one that gives up (withdraws) once queued; each
// token is taken once, and whoever takes one reads what the releaser wrote before releasing it.
// A lost release spins forever, which Relacy reports. docs/design/sync.md#model.
#include "model/model_support.hpp"

#include <forkjoin/detail/latch_protocol.hpp>
#include <forkjoin/detail/semaphore_protocol.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

template <class Waiter>
void spin_until_released(Waiter& w) {
    while (!w.released.is_ready())
        relacy_atomics::yield_thread();
}

using latch = fj::detail::latch_protocol<relacy_atomics, fj::model::relacy_mutex>;

// Threads 0 and 1 write their part and count down by one; thread 2 waits, then reads both parts.
struct latch_scenario : rl::test_suite<latch_scenario, 3> {
    latch gate{2};
    rl::var<int> part[2];

    void thread(unsigned index) {
        if (index < 2) {
            part[index]($) = 1;
            std::ptrdiff_t count = 0;
            latch::queue opened;
            RL_ASSERT(gate.count_down(1, count, opened));
            fj::detail::release_all(opened);
            return;
        }
        if (!gate.try_wait()) {
            latch::waiter w;
            if (!gate.ready_or_queue(w)) {
                spin_until_released(w);
                RL_ASSERT(w.outcome == fj::detail::wait_outcome::granted);
            }
        }
        RL_ASSERT(part[0]($) == 1 && part[1]($) == 1);
    }

    void after() {
        RL_ASSERT(!gate.has_waiters());
        RL_ASSERT(gate.try_wait());
    }
};

using semaphore = fj::detail::semaphore_protocol<relacy_atomics, fj::model::relacy_mutex>;

// Thread 0 writes the data, then releases one token, then another. Thread 1 acquires (waiting if
// it must); thread 2 takes a token if one is there or handed to it before it gives up.
struct semaphore_scenario : rl::test_suite<semaphore_scenario, 3> {
    semaphore tokens{0};
    rl::var<int> data;
    int taken = 0;

    bool acquire(bool give_up) {
        if (tokens.try_acquire())
            return true;
        semaphore::waiter w;
        if (tokens.take_or_queue(w))
            return true;
        if (give_up && tokens.withdraw(w))
            return false;
        spin_until_released(w);
        RL_ASSERT(w.outcome == fj::detail::wait_outcome::granted);
        return true;
    }

    void thread(unsigned index) {
        if (index == 0) {
            data($) = 1;
            for (int i = 0; i < 2; ++i) {
                std::ptrdiff_t count = 0;
                semaphore::queue granted;
                RL_ASSERT(tokens.release(1, 2, count, granted));
                fj::detail::release_all(granted);
            }
            return;
        }
        if (acquire(index == 2)) {
            RL_ASSERT(data($) == 1);
            ++taken; // Relacy runs one thread at a time: a plain int is enough
        }
    }

    void after() {
        RL_ASSERT(!tokens.has_waiters());
        int left = 0;
        while (tokens.try_acquire())
            ++left;
        RL_ASSERT(taken + left == 2); // each token taken exactly once
        RL_ASSERT(taken >= 1);        // thread 1 always gets one
    }
};

const fj::model::search k_bound{rl::sched_bound, 3, 0};

TEST(latch_model, two_count_downs_and_a_waiter) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<latch_scenario>(k_bound));
}

TEST(semaphore_model, a_releaser_an_acquirer_and_one_that_gives_up) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<semaphore_scenario>(k_bound));
}

constexpr auto acq_rel = std::memory_order::acq_rel;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto relaxed = std::memory_order::relaxed;

class latch_mutants : public testing::TestWithParam<mutant> {};

TEST_P(latch_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<latch_scenario>(k_bound, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, latch_mutants,
    testing::Values(
        // A count-down that does not publish its thread's write.
        mutant{"count_down_acquire", {"::count_down(", access::compare_exchange, acq_rel, acquire}},
        // The count-down that reaches zero does not carry the others' writes to the waiters.
        mutant{"count_down_release", {"::count_down(", access::compare_exchange, acq_rel, release}},
        // A waiter that finds it open does not see the count-downs' writes.
        mutant{"try_wait_relaxed", {"::try_wait(", access::load, acquire, relaxed}}),
    fj::model::mutant_name);

class semaphore_mutants : public testing::TestWithParam<mutant> {};

TEST_P(semaphore_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<semaphore_scenario>(k_bound, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(weakened_orders, semaphore_mutants,
                         testing::Values(
                             // A token taken from the count without seeing the releaser's write.
                             mutant{"try_acquire_relaxed",
                                    {"::try_acquire(", access::compare_exchange, acquire, relaxed}},
                             // A token added to the count without publishing the releaser's write.
                             mutant{"release_add_relaxed",
                                    {"::release(", access::read_modify_write, release, relaxed}}),
                         fj::model::mutant_name);

} // namespace
