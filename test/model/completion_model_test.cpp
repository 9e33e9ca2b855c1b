// The completion word (runtime/include/forkjoin/detail/completion.hpp) under Relacy: finish()
// against the one waiter's registration and deregistration (woken exactly once, or sees done, and
// reads the result without a race), try_start() against cancel() in both formulations of their
// StoreLoad barrier (exactly one wins), and detach() against finish() (the state is freed exactly
// once). docs/design/completion.md#model and docs/design/cancel.md#model say what is covered.
#include "model/model_support.hpp"

#include <forkjoin/detail/completion.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using completion = fj::detail::basic_completion<relacy_atomics>;
using start_flag = fj::detail::basic_start_flag<relacy_atomics>;

// A waiter record with a field the waiter writes before registering: the producer's wake() reads
// it, so a registration that does not publish the record is a data race.
struct record : fj::detail::waiter {
    rl::var<int> field;
    fj::model::relacy_atomic<int> signalled{0};
    int wakes = 0; // checked after the threads join

    static void wake(fj::detail::waiter* w) noexcept {
        auto* self = static_cast<record*>(w);
        RL_ASSERT(self->field($) == 1);
        ++self->wakes;
        self->signalled.store(1, std::memory_order_release); // the record's own wake-up
    }
};

// Thread 0 stores the result and finishes; thread 1 registers a waiter record and waits for its
// wake() (or, with Deregister, times out first and takes the record back), then reads the result.
template <bool Deregister>
struct finish_scenario : rl::test_suite<finish_scenario<Deregister>, 2> {
    completion word;
    rl::var<int> result;
    record waiter;
    bool registered = false;
    bool deregistered = false;

    void thread(unsigned index) {
        if (index == 0) {
            result($) = 42;
            RL_ASSERT(!word.finish()); // nobody detached
            return;
        }
        waiter.m_wake = &record::wake;
        waiter.field($) = 1;
        registered = word.try_register(&waiter);
        if (registered) {
            if (Deregister && word.try_deregister(&waiter)) {
                deregistered = true; // timed out before finish() saw the record
                return;
            }
            // finish() has run or is running: its wake() is the last touch of the record.
            while (waiter.signalled.load(std::memory_order_acquire) == 0)
                relacy_atomics::yield_thread();
        }
        // As the waits do: the result is read at once, without a further is_done().
        RL_ASSERT(result($) == 42);
        RL_ASSERT(word.is_done());
    }

    void after() { RL_ASSERT(waiter.wakes == (registered && !deregistered ? 1 : 0)); }
};

// Thread 0 claims and runs the task, then finishes; thread 1 cancels it. Exactly one wins.
// Asymmetric picks the formulation of the StoreLoad pair (relacy_atomics::asymmetric).
template <bool Asymmetric>
struct cancel_scenario : rl::test_suite<cancel_scenario<Asymmetric>, 2> {
    completion word;
    start_flag start;
    int ran = 0;
    bool cancelled = false;

    void before() { relacy_atomics::asymmetric = Asymmetric; }

    void thread(unsigned index) {
        if (index == 0) {
            if (word.try_start(start))
                ++ran;
            // A skipped task stores fj::task_cancelled and finishes all the same.
            RL_ASSERT(!word.finish());
        } else {
            cancelled = word.cancel(start);
        }
    }

    void after() {
        RL_ASSERT(ran + (cancelled ? 1 : 0) == 1);
        relacy_atomics::asymmetric = true;
    }
};

// Thread 0 is the worker that pops the task: it runs it if it claims it, and finishes either way
// (a task taken over is only finished: lifecycle/take_over.cpp); thread 1 is a get() outside
// every pool that tries to take the task over and run it itself, and otherwise waits for it.
// Exactly one of them runs it, the consumer reads the result without a race, and the state is
// freed exactly once, after both sides' last access.
template <bool Asymmetric>
struct take_scenario : rl::test_suite<take_scenario<Asymmetric>, 2> {
    completion word;
    start_flag start;
    rl::var<int> result;
    rl::var<int> producer_field; // the producer's accesses to the state, up to finish()
    rl::var<int> consumer_field; // the consumer's, up to its release
    int runs = 0;
    int frees = 0;

    void before() { relacy_atomics::asymmetric = Asymmetric; }

    void free_state() {
        ++frees;
        result($) = 0;
        producer_field($) = 0;
        consumer_field($) = 0;
    }

    void thread(unsigned index) {
        if (index == 0) {
            producer_field($) = 1;
            if (word.try_start(start)) {
                ++runs;
                result($) = 42;
            } else {
                RL_ASSERT(word.is_taken()); // nobody cancels here
            }
            if (word.finish())
                free_state(); // the taker released the state first
            return;
        }
        consumer_field($) = 1;
        if (word.try_take(start)) {
            ++runs;
            result($) = 42;
            RL_ASSERT(result($) == 42);
            if (word.is_done() || word.detach()) // future::get_taken_over()'s release
                free_state();
            return;
        }
        while (!word.is_done()) // the wait
            relacy_atomics::yield_thread();
        RL_ASSERT(result($) == 42);
        free_state(); // get(): done, so the state is ours alone
    }

    void after() {
        RL_ASSERT(runs == 1);
        RL_ASSERT(frees == 1);
        relacy_atomics::asymmetric = true;
    }
};

// Thread 0 stores the result and finishes; thread 1 drops the future unread: its last access to
// the state, then detach(). Whoever sets the second flag frees the state, which here writes every
// field the other side touched.
struct detach_scenario : rl::test_suite<detach_scenario, 2> {
    completion word;
    rl::var<int> result;
    rl::var<int> consumer_field;
    int frees = 0;

    void free_state() {
        ++frees;
        result($) = 0;
        consumer_field($) = 0;
    }

    void thread(unsigned index) {
        if (index == 0) {
            result($) = 42;
            if (word.finish())
                free_state();
        } else {
            consumer_field($) = 1;
            if (word.is_done() || word.detach())
                free_state();
        }
    }

    void after() { RL_ASSERT(frees == 1); }
};

constexpr fj::model::search k_full{rl::sched_full};

TEST(completion_model, finish_against_register) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<finish_scenario<false>>(k_full));
}

TEST(completion_model, finish_against_register_and_deregister) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<finish_scenario<true>>(k_full));
}

TEST(completion_model, start_against_cancel_asymmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<cancel_scenario<true>>(k_full));
}

TEST(completion_model, start_against_cancel_symmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<cancel_scenario<false>>(k_full));
}

TEST(completion_model, start_against_take_over_asymmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<take_scenario<true>>(k_full));
}

TEST(completion_model, start_against_take_over_symmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<take_scenario<false>>(k_full));
}

TEST(completion_model, detach_against_finish) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<detach_scenario>(k_full));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto release = std::memory_order::release;
constexpr auto acq_rel = std::memory_order::acq_rel;
constexpr auto seq_cst = std::memory_order::seq_cst;

// Each weakened order below is rejected by the scenario named in the parameter's test.
class completion_finish_mutants : public testing::TestWithParam<mutant> {};

TEST_P(completion_finish_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<finish_scenario<false>>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, completion_finish_mutants,
    testing::Values(
        // finish() publishes the result: relaxed, the waiter reads it unordered.
        mutant{"finish_exchange_relaxed",
               {"::finish(", access::read_modify_write, acq_rel, relaxed}},
        // The registration publishes the record: relaxed, wake() reads its field unordered.
        mutant{"register_cas_relaxed",
               {"::try_register(", access::compare_exchange, acq_rel, relaxed}},
        // release (its failure order relaxed): a registration that fails on k_done reads the
        // result unordered.
        mutant{"register_cas_release",
               {"::try_register(", access::compare_exchange, acq_rel, release}}),
    fj::model::mutant_name);

class completion_detach_mutants : public testing::TestWithParam<mutant> {};

TEST_P(completion_detach_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<detach_scenario>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, completion_detach_mutants,
    testing::Values(
        // finish()'s acquire half: the producer frees the state before the consumer's last access.
        mutant{"finish_exchange_release",
               {"::finish(", access::read_modify_write, acq_rel, release}}),
    fj::model::mutant_name);

// cancel()'s half of the StoreLoad pair: weakened, the producer runs the task and cancel() wins
// too.
class completion_cancel_symmetric_mutants : public testing::TestWithParam<mutant> {};

TEST_P(completion_cancel_symmetric_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<cancel_scenario<false>>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(weakened_orders, completion_cancel_symmetric_mutants,
                         testing::Values(
                             // Symmetric formulation: the seq_cst CAS is cancel()'s store.
                             mutant{"cancel_cas_acq_rel",
                                    {"::claim_before_start(", access::compare_exchange, seq_cst,
                                     acq_rel}}),
                         fj::model::mutant_name);

class completion_cancel_asymmetric_mutants : public testing::TestWithParam<mutant> {};

TEST_P(completion_cancel_asymmetric_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<cancel_scenario<true>>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, completion_cancel_asymmetric_mutants,
    testing::Values(
        // Asymmetric formulation: the heavy barrier is cancel()'s StoreLoad fence.
        mutant{"cancel_heavy_barrier_acq_rel",
               {"::claim_before_start(", access::fence, seq_cst, acq_rel}},
        // ...and the light one try_start()'s.
        mutant{"start_light_barrier_acq_rel", {"::try_start(", access::fence, seq_cst, acq_rel}}),
    fj::model::mutant_name);

} // namespace

// The take-over is the same race: with its claim weakened, the worker runs the task and the taker
// runs it too.
class completion_take_symmetric_mutants : public testing::TestWithParam<mutant> {};

TEST_P(completion_take_symmetric_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<take_scenario<false>>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, completion_take_symmetric_mutants,
    testing::Values(mutant{"take_cas_acq_rel",
                           {"::claim_before_start(", access::compare_exchange, seq_cst, acq_rel}},
                    // The release after a take-over: with finish()'s acquire half gone, the worker
                    // frees the state before the taker's last access.
                    mutant{"take_finish_exchange_release",
                           {"::finish(", access::read_modify_write, acq_rel, release}}),
    fj::model::mutant_name);

class completion_take_asymmetric_mutants : public testing::TestWithParam<mutant> {};

TEST_P(completion_take_asymmetric_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<take_scenario<true>>(k_full, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(weakened_orders, completion_take_asymmetric_mutants,
                         testing::Values(mutant{
                             "take_heavy_barrier_acq_rel",
                             {"::claim_before_start(", access::fence, seq_cst, acq_rel}}),
                         fj::model::mutant_name);
