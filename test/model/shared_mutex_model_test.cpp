// fj::shared_mutex's protocol (runtime/include/forkjoin/detail/shared_mutex_protocol.hpp) under
// Relacy: readers and writers that take the fast paths or queue and are handed the lock, and
// waiters that time out (a writer leaving the front lets the readers behind it in). Writers write
// and readers read a plain variable: a writer overlapping anyone, or a missing acquire/release
// between one holder and the next, is a data race. Every queued waiter is granted the lock or
// withdraws (a lost hand-over spins forever: Relacy reports it), and at the end the lock is free
// with nobody queued. docs/design/sync.md#model.
#include "model/model_support.hpp"

#include <forkjoin/detail/shared_mutex_protocol.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using protocol = fj::detail::shared_mutex_protocol<relacy_atomics, fj::model::relacy_mutex>;
using waiter = protocol::waiter;

// The wait, as a spin on the waiter's completion (the runtime parks or blocks on it; either ends
// at the same finish()).
void wait_for(waiter& w) {
    while (!w.released.is_ready())
        relacy_atomics::yield_thread();
    RL_ASSERT(w.outcome == fj::detail::wait_outcome::granted);
}

// fj::shared_mutex::lock() and lock_shared(), the spin before queuing as one try.
void lock(protocol& m, bool shared) {
    if (shared ? m.try_lock_shared() : m.try_lock())
        return;
    waiter w;
    if (!(shared ? m.lock_shared_or_queue(w) : m.lock_or_queue(w)))
        wait_for(w);
}

// A timed lock that times out as soon as it has queued: withdraw (releasing any readers that
// lets in), or, when an unlock granted the lock first, wait for that release. True if it got the
// lock.
bool lock_or_give_up(protocol& m, bool shared) {
    if (shared ? m.try_lock_shared() : m.try_lock())
        return true;
    waiter w;
    if (shared ? m.lock_shared_or_queue(w) : m.lock_or_queue(w))
        return true;
    protocol::waiters admitted;
    const bool withdrawn = m.withdraw(w, admitted);
    fj::detail::release_all(admitted);
    if (withdrawn) {
        RL_ASSERT(w.outcome == fj::detail::wait_outcome::timed_out);
        return shared ? m.try_lock_shared() : m.try_lock(); // the last try of a timed lock
    }
    wait_for(w);
    return true;
}

void unlock(protocol& m) {
    if (!m.try_unlock())
        fj::detail::release_all(m.hand_over());
}

// HandOver: the last reader out hands the lock over; without it the hand-over is lost, and the
// model must reject that variant.
template <bool HandOver = true>
void unlock_shared(protocol& m) {
    if (!m.try_unlock_shared() && HandOver)
        fj::detail::release_all(m.admit_if_free());
}

enum class role { writer, reader, timed_writer, timed_reader };

// Three threads, one role each: writers increment the guarded value, readers read it.
template <role R0, role R1, role R2, bool HandOver = true>
struct scenario : rl::test_suite<scenario<R0, R1, R2, HandOver>, 3> {
    protocol m;
    rl::var<int> value;
    int writes = 0; // under the lock too (Relacy runs one thread at a time: a plain int is enough)

    void before() { value($) = 0; }

    void thread(unsigned index) {
        const role r = index == 0 ? R0 : index == 1 ? R1 : R2;
        const bool shared = r == role::reader || r == role::timed_reader;
        const bool timed = r == role::timed_writer || r == role::timed_reader;
        if (timed) {
            if (!lock_or_give_up(m, shared))
                return;
        } else {
            lock(m, shared);
        }
        if (shared) {
            RL_ASSERT(value($) <= 2);
            unlock_shared<HandOver>(m);
        } else {
            value($) = value($) + 1;
            ++writes;
            unlock(m);
        }
    }

    void after() {
        RL_ASSERT(value($) == writes);
        RL_ASSERT(!m.has_waiters());
        RL_ASSERT(m.try_lock()); // free, nobody queued
    }
};

using two_readers_and_a_writer = scenario<role::writer, role::reader, role::reader>;
using a_writer_a_reader_and_a_timed_writer =
    scenario<role::reader, role::writer, role::timed_writer>;
using a_writer_a_reader_and_a_timed_reader =
    scenario<role::writer, role::reader, role::timed_reader>;
using two_writers_and_a_reader = scenario<role::writer, role::writer, role::reader>;
using lost_hand_over = scenario<role::reader, role::writer, role::reader, false>;

const fj::model::search k_bound{rl::sched_bound, 3, 0};

TEST(shared_mutex_model, two_readers_and_a_writer) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_readers_and_a_writer>(k_bound));
}

TEST(shared_mutex_model, two_writers_and_a_reader) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_writers_and_a_reader>(k_bound));
}

TEST(shared_mutex_model, a_writer_a_reader_and_a_writer_that_times_out) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<a_writer_a_reader_and_a_timed_writer>(k_bound));
}

TEST(shared_mutex_model, a_writer_a_reader_and_a_reader_that_times_out) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<a_writer_a_reader_and_a_timed_reader>(k_bound));
}

TEST(shared_mutex_model, a_last_reader_that_does_not_hand_over_is_rejected) {
    EXPECT_FALSE(fj::model::check<lost_hand_over>(k_bound).passed);
}

constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto relaxed = std::memory_order::relaxed;

class shared_mutex_mutants : public testing::TestWithParam<mutant> {};

TEST_P(shared_mutex_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(
        fj::model::check<a_writer_a_reader_and_a_timed_writer>(k_bound, GetParam().change));
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, shared_mutex_mutants,
    testing::Values(
        // The fast lock does not see the last critical section.
        mutant{"lock_relaxed", {"::try_lock(", access::compare_exchange, acquire, relaxed}},
        // The fast shared lock does not see the last writer's write.
        mutant{"shared_lock_relaxed",
               {"::try_lock_shared(", access::compare_exchange, acquire, relaxed}},
        // The fast unlock does not publish the writer's critical section.
        mutant{"unlock_relaxed", {"::try_unlock(", access::compare_exchange, release, relaxed}},
        // A reader's unlock does not order its read before the next writer's write.
        mutant{"shared_unlock_relaxed",
               {"::try_unlock_shared(", access::read_modify_write, release, relaxed}},
        // The slow lock that finds the lock free does not see the last critical section.
        mutant{"slow_take_relaxed",
               {"::take_or_queue(", access::compare_exchange, acquire, relaxed}}),
    fj::model::mutant_name);

// Two readers before a writer: the last reader's hand-over must see the other reader's unlock.
TEST(shared_mutex_model, a_last_reader_that_does_not_acquire_the_others_unlocks_is_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<two_readers_and_a_writer>(
        k_bound, fj::model::mutation{"::admit_if_free(", access::load, acquire, relaxed}));
}

// A writer hands over to a reader; the other reader comes by the fast path while that one holds
// the lock, and must see the writer's write through the hand-over's release.
TEST(shared_mutex_model, a_hand_over_that_does_not_publish_is_rejected) {
    FJ_EXPECT_MODEL_REJECTS(fj::model::check<two_readers_and_a_writer>(
        k_bound,
        fj::model::mutation{"::admit_front(", access::compare_exchange, release, relaxed}));
}

} // namespace
