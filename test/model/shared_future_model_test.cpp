// The shared future's core (runtime/src/waits/shared_core_sync.hpp) under Relacy: every listener
// that joins the list is woken exactly once by the broadcast, every holder reads the task's value
// without a data race, and the state is freed exactly once, after every read, by whoever drops the
// last reference. docs/design/shared-future.md#model says what is covered and what is not.
#include "model/model_support.hpp"
#include "waits/shared_core_sync.hpp"

#include <relacy/backoff.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using fj::model::relacy_mutex;

using core_sync = fj::detail::basic_shared_core_sync<relacy_atomics, relacy_mutex>;

// A waiter's listener: its wake() stands for the listener's completion being finished (release),
// and the waiter's wait for its acquire.
struct listener : fj::detail::shared_listener {
    relacy_atomics::atomic<bool> woken{false};
    int wakes = 0;          // written by the broadcast only, checked after the threads join
    bool listening = false; // on the list and not taken off by a timed-out wait

    listener() { m_wake = &wake; }

    static void wake(fj::detail::waiter* w) noexcept {
        auto* self = static_cast<listener*>(w);
        ++self->wakes;
        self->woken.store(true, std::memory_order_release);
    }

    void wait() {
        while (!woken.load(std::memory_order_acquire))
            rl::yield(1, $);
    }
};

constexpr int k_value = 42;

// Thread 0 is the producer: it stores the task's value and runs the broadcast (what the task's
// finish() calls after its exchange), dropping the registration's reference. Threads 1 and 2 each
// hold a copy: they wait (try_listen, then wait for the wake-up unless the broadcast came first),
// read the value and drop their reference. With TimesOut, holder 1's wait times out as soon as it
// has listened: it leaves the list unless the broadcast took it, and reads the value only if
// woken. The last reference frees the state: it overwrites the value (a read after it is a data
// race or a wrong value) and counts the frees.
template <bool TimesOut>
struct shared_scenario : rl::test_suite<shared_scenario<TimesOut>, 3> {
    core_sync* core = nullptr;
    rl::var<int> value;
    int frees = 0;
    listener listeners[2];
    bool read[2] = {false, false};

    void before() {
        core = new core_sync;
        core->start_registered(); // holder 1's reference and the registration's
        core->add_reference();    // holder 2's copy
        value($) = 0;
    }

    void free_state() {
        value($) = -1;
        ++frees;
        delete core;
    }

    void thread(unsigned index) {
        if (index == 0) {
            value($) = k_value;
            if (core->broadcast())
                free_state();
            return;
        }
        listener& l = listeners[index - 1];
        bool ready = true;
        if (core->try_listen(l)) {
            l.listening = true;
            if (TimesOut && index == 1 && core->try_unlisten(l)) {
                l.listening = false;
                ready = false; // timed out: the value is not read
            } else {
                l.wait();
            }
        }
        if (ready) {
            RL_ASSERT(value($) == k_value);
            read[index - 1] = true;
        }
        if (core->drop_reference())
            free_state();
    }

    void after() {
        RL_ASSERT(frees == 1);
        for (const listener& l : listeners)
            RL_ASSERT(l.wakes == (l.listening ? 1 : 0));
        RL_ASSERT(read[1]);
        RL_ASSERT(read[0] || TimesOut);
    }
};

// Two holders waiting and dropping their copies against the producer's broadcast.
using waiters_scenario = shared_scenario<false>;
// The same, holder 1's wait timing out: it unlinks itself, or waits for the broadcast that took it.
using timeout_scenario = shared_scenario<true>;
// Preemption bound 4 (a full search does not finish in minutes).
constexpr fj::model::search k_search{rl::sched_bound, 4};

TEST(shared_future_model, waiters_against_the_broadcast) {
    const fj::model::outcome result = fj::model::check<waiters_scenario>(k_search);
    FJ_EXPECT_MODEL_PASSES(result);
}

TEST(shared_future_model, timed_out_waiter_against_the_broadcast) {
    const fj::model::outcome result = fj::model::check<timeout_scenario>(k_search);
    FJ_EXPECT_MODEL_PASSES(result);
}

// Each weakened order below is rejected: the free races with a holder's read of the value.
class shared_future_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(shared_future_mutants, are_rejected) {
    const fj::model::outcome result =
        fj::model::check<waiters_scenario>(k_search, GetParam().change);
    FJ_EXPECT_MODEL_REJECTS(result);
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto acq_rel = std::memory_order::acq_rel;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, shared_future_mutants,
    testing::Values(
        // The last drop does not acquire the other holders' reads (nor the producer's store).
        mutant{"drop_release", {"drop_reference", access::read_modify_write, acq_rel, release}},
        // A holder's reads are not released to the last drop.
        mutant{"drop_acquire", {"drop_reference", access::read_modify_write, acq_rel, acquire}},
        mutant{"drop_relaxed", {"drop_reference", access::read_modify_write, acq_rel, relaxed}}),
    fj::model::mutant_name);

} // namespace
