// fj::mutex's protocol (runtime/include/forkjoin/detail/mutex_protocol.hpp) under Relacy: lockers
// that take the fast path, barge, queue and are woken or handed the mutex, or time out, against
// owners that unlock fast, wake a waiter or hand over. The critical sections never overlap and each
// sees the previous one's write (a plain variable: an overlap or a missing acquire/release is a
// data race), every queued waiter is handed the mutex or withdraws (a lost hand-over spins forever:
// Relacy reports it), and at the end the mutex is free with nobody queued.
// docs/design/sync.md#model.
#include "model/model_support.hpp"

#include <forkjoin/detail/mutex_protocol.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using protocol = fj::detail::mutex_protocol<relacy_atomics, fj::model::relacy_mutex>;
using waiter = protocol::waiter;

// fj::mutex::lock(), with the wait as a spin on the waiter's completion (the runtime parks or
// blocks on it; either ends at the same finish()), and the spin before queuing as one try. A
// woken waiter tries again from the front of the queue; one that lost `Losses` times asks for the
// hand-over mode.
template <int Losses>
void lock(protocol& m) {
    if (m.try_lock_idle())
        return;
    for (int lost = 0;; ++lost) {
        if (m.try_take())
            return;
        waiter w;
        if (m.take_or_queue(w, lost > 0, lost >= Losses))
            return;
        while (!w.released.is_ready())
            relacy_atomics::yield_thread();
        if (w.outcome == fj::detail::wait_outcome::granted)
            return;
        RL_ASSERT(w.outcome == fj::detail::wait_outcome::woken);
        m.end_wake();
    }
}

// fj::mutex::try_lock_for() that times out as soon as it has queued: withdraw, or, when
// release_one() took the waiter first, wait for it and take what it gives. True if it got the
// mutex. TryAfterWake: a woken waiter's give-up follows a failed take (the protocol); without it
// the wake-up is lost, and the model must reject that variant.
template <bool TryAfterWake = true>
bool lock_or_give_up(protocol& m) {
    if (m.try_take())
        return true;
    waiter w;
    if (m.take_or_queue(w, false, false))
        return true;
    if (m.withdraw(w)) {
        RL_ASSERT(w.outcome == fj::detail::wait_outcome::timed_out);
        return m.try_take(); // the last try of a timed lock
    }
    while (!w.released.is_ready())
        relacy_atomics::yield_thread();
    if (w.outcome == fj::detail::wait_outcome::granted)
        return true;
    RL_ASSERT(w.outcome == fj::detail::wait_outcome::woken);
    m.end_wake();
    // Gives up if the take fails: the mutex is held then, and its unlock wakes the next.
    return TryAfterWake && m.try_take();
}

void unlock(protocol& m) {
    if (m.try_unlock())
        return;
    if (waiter* next = m.release_one())
        fj::detail::release(*next);
}

// Three threads each lock, increment, unlock. GiveUp: thread 2 gives up if it has to queue.
// Losses: after how many lost wake-ups a waiter asks for the hand-over mode (0: at once, so the
// hand-over is exercised; 3: the runtime's, so barging is).
template <bool GiveUp, int Losses = 3, bool TryAfterWake = true>
struct mutex_scenario : rl::test_suite<mutex_scenario<GiveUp, Losses, TryAfterWake>, 3> {
    protocol m;
    rl::var<int> counter;
    int got = 0;

    void before() { counter($) = 0; }

    void thread(unsigned index) {
        if (GiveUp && index == 2) {
            if (!lock_or_give_up<TryAfterWake>(m))
                return;
        } else {
            lock<Losses>(m);
        }
        counter($) = counter($) + 1;
        ++got; // under the mutex too (Relacy runs one thread at a time: a plain int is enough)
        unlock(m);
    }

    void after() {
        RL_ASSERT(counter($) == got);
        RL_ASSERT(got == (GiveUp ? counter($) : 3));
        RL_ASSERT(!m.has_waiters());
        RL_ASSERT(m.try_lock_idle()); // free, nobody queued, no wake-up in flight
    }
};

const fj::model::search k_bound{rl::sched_bound, 3, 0};

TEST(mutex_model, three_lockers) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<mutex_scenario<false>>(k_bound));
}

TEST(mutex_model, two_lockers_and_one_that_times_out) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<mutex_scenario<true>>(k_bound));
}

using hand_over_scenario = mutex_scenario<false, 0>;
using lost_wake_scenario = mutex_scenario<true, 3, false>;

TEST(mutex_model, three_lockers_in_the_hand_over_mode) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<hand_over_scenario>(k_bound));
}

TEST(mutex_model, a_woken_waiter_that_gives_up_without_trying_is_rejected) {
    EXPECT_FALSE(fj::model::check<lost_wake_scenario>(k_bound).passed);
}

constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto relaxed = std::memory_order::relaxed;

class mutex_mutants : public testing::TestWithParam<mutant> {};

TEST_P(mutex_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<mutex_scenario<true>>(k_bound, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, mutex_mutants,
    testing::Values(
        // The fast lock does not see the previous critical section's write.
        mutant{"idle_lock_relaxed",
               {"::try_lock_idle(", access::compare_exchange, acquire, relaxed}},
        // A barging take does not see it.
        mutant{"take_relaxed", {"::try_take(", access::compare_exchange, acquire, relaxed}},
        // The fast unlock does not publish the critical section.
        mutant{"fast_unlock_relaxed",
               {"::try_unlock(", access::compare_exchange, release, relaxed}},
        // The slow lock that finds the mutex free does not see the last owner's write.
        mutant{"slow_take_relaxed",
               {"::take_or_queue(", access::compare_exchange, acquire, relaxed}},
        // The unlock that frees the mutex without waking anyone (the waiter timed out, or a
        // woken one has not resumed yet) does not publish.
        mutant{"freeing_unlock_relaxed",
               {"::release_one(", access::read_modify_write, release, relaxed}},
        // The unlock that frees the mutex for a woken waiter does not publish.
        mutant{"waking_unlock_relaxed",
               {"::release_one(", access::compare_exchange, release, relaxed}}),
    fj::model::mutant_name);

} // namespace
