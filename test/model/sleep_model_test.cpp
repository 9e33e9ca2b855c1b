// The sleep protocol's Dekker pair (docs/design/sleep.md) under Relacy: the production sleep word
// (forkjoin/detail/sleep_word.hpp) against a push to the production deque
// (forkjoin/detail/chase_lev_deque.hpp) or injection queue (state/injection_queue.hpp). A worker
// going to sleep either sees the work in its re-check or is woken: once the threads have joined, a
// sleeper that committed its wait finds a ticket in the word (a wake-up given after the push,
// which one counted thread takes). Both formulations: the symmetric seq_cst one and the asymmetric
// barrier pair. With searchers (docs/design/sleep.md#searching): a push that wakes nobody because
// a worker searches is seen by that searcher's re-check.
// docs/design/sleep.md#model says what is covered and what is abstracted.
#include "model/model_support.hpp"
#include "state/injection_queue.hpp"
#include "state/sleep_word_ops.hpp"

#include <forkjoin/detail/chase_lev_deque.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

using sleep_word = fj::detail::basic_sleep_word<relacy_atomics>;

// Work a pusher publishes; its payload is written before the publication.
struct item {
    relacy_atomics::atomic<item*> m_next{nullptr}; // the injection queue's link
    rl::var<int> payload;
};

// The work sources a pusher publishes to and a sleeper re-checks, as the pool does.
// A worker's own deque: push() (release) or push_seq_cst(); the re-check's size_hint().
struct deque_source {
    fj::detail::chase_lev_deque<item*, relacy_atomics> deque{2};
    void publish(item* it, bool seq_cst) {
        if (seq_cst)
            deque.push_seq_cst(it);
        else
            deque.push(it);
    }
    bool visible() const { return !deque.empty_hint(); }
};
// The injection queue (submit): its seq_cst CAS on the tail in either formulation; the re-check's
// exact empty().
struct queue_source {
    fj::detail::injection_queue<item, relacy_atomics> queue;
    void publish(item* it, bool) { queue.push(it); }
    bool visible() const { return !queue.empty(); }
};

// sleep.cpp's wake_for_work(), the slow path of a push that found a thread counted: the fence (in
// the asymmetric formulation), then a ticket unless somebody searches
// (event_count::notify_one_unless_searching(); the mutex and the signal that follow are left out).
void wake_for_work(sleep_word& word) {
    if (relacy_atomics::asymmetric_barrier_registered())
        relacy_atomics::thread_fence(std::memory_order_seq_cst);
    (void)word.give_ticket_unless_searching();
}

// Thread 0, the pusher (pool_core.hpp's publish_work): publish the item (seq_cst, or release and
// the light barrier), then the sleeper check, and if some thread waits, the wake-up.
// Thread 1, the sleeper (sleep.cpp's go_idle, steps 1-7): prepare_wait(), the heavy barrier in the
// asymmetric formulation, the re-check; work seen: cancel_wait(); else commit the wait.
template <class Source, bool Asymmetric>
struct sleep_scenario : rl::test_suite<sleep_scenario<Source, Asymmetric>, 2> {
    sleep_word word;
    Source source;
    item work;
    bool committed = false;

    void before() { relacy_atomics::asymmetric = Asymmetric; }

    void thread(unsigned index) {
        if (index == 0)
            pusher();
        else
            sleeper();
    }

    void pusher() {
        work.payload($) = 1;
        if (relacy_atomics::asymmetric_barrier_registered()) {
            source.publish(&work, false);
            relacy_atomics::light_barrier();
        } else {
            source.publish(&work, true);
        }
        if (word.any_of(sleep_word::k_waiters))
            wake_for_work(word);
    }

    void sleeper() {
        (void)word.prepare_wait();
        if (relacy_atomics::asymmetric_barrier_available())
            relacy_atomics::heavy_barrier();
        if (source.visible()) {
            (void)word.cancel_wait(); // takes the pusher's ticket if one came meanwhile
            return;
        }
        committed = true; // commit_wait(): blocks until it takes a ticket
    }

    // No lost wake-up: a committed sleeper finds a ticket, so event_count::wait_for_ticket (which
    // looks for it under the mutex the notifier takes after giving it) returns. A sleeper that
    // cancelled left no ticket behind with nobody counted to take it.
    void after() { RL_ASSERT(word.try_take_ticket() == committed); }
};

// Thread 0 pushes as above (asymmetric formulation); threads 1 and 2 are two sleepers, each paying
// the heavy barrier only when its prepare_wait() found no other thread counted (go_idle's step 2,
// docs/design/sleep.md#one-barrier-per-idle-gap). The work is not lost: if both committed, a
// ticket waits for one of them (the woken one finds the work).
template <class Source>
struct two_sleepers_scenario : rl::test_suite<two_sleepers_scenario<Source>, 3> {
    sleep_word word;
    Source source;
    item work;
    bool committed[2] = {false, false};

    void before() { relacy_atomics::asymmetric = true; }

    void thread(unsigned index) {
        if (index == 0)
            pusher();
        else
            sleeper(index - 1);
    }

    void pusher() {
        work.payload($) = 1;
        source.publish(&work, false);
        relacy_atomics::light_barrier();
        if (word.any_of(sleep_word::k_waiters))
            wake_for_work(word);
    }

    void sleeper(unsigned i) {
        const sleep_word::key k = word.prepare_wait();
        if (sleep_word::waiters_of(k) == 0)
            relacy_atomics::heavy_barrier();
        // (go_idle() takes a fence when it skips the barrier; with no searcher here it is left
        // out: a weaker sleeper, which the check must pass all the same.)
        if (source.visible()) {
            (void)word.cancel_wait();
            return;
        }
        committed[i] = true;
    }

    void after() {
        if (committed[0] && committed[1])
            RL_ASSERT(word.try_take_ticket());
    }
};

// The rule the count stands in for, and why it is not "once per sleeper per idle gap": one sleeper
// pays the barrier, re-checks (nothing), is woken without work (it leaves the count), and prepares
// to sleep again without a barrier since it paid one moments ago. A push whose check fell between
// its two stays reads a count of zero and notifies nobody, and the second re-check, with no
// barrier after the push, can miss it: the checker finds that execution.
template <class Source>
struct resleep_without_barrier_scenario
    : rl::test_suite<resleep_without_barrier_scenario<Source>, 2> {
    sleep_word word;
    Source source;
    item work;
    bool committed = false;

    void before() { relacy_atomics::asymmetric = true; }

    void thread(unsigned index) {
        if (index == 0)
            pusher();
        else
            sleeper();
    }

    void pusher() {
        work.payload($) = 1;
        source.publish(&work, false);
        relacy_atomics::light_barrier();
        if (word.any_of(sleep_word::k_waiters))
            wake_for_work(word);
    }

    void sleeper() {
        (void)word.prepare_wait();
        relacy_atomics::heavy_barrier();
        if (source.visible()) {
            (void)word.cancel_wait();
            return;
        }
        (void)word.cancel_wait(); // woken without work: back to looking, then to sleep again
        (void)word.prepare_wait();
        if (source.visible()) {
            (void)word.cancel_wait();
            return;
        }
        committed = true;
    }

    void after() {
        if (committed)
            RL_ASSERT(word.try_take_ticket());
    }
};

// Searchers (docs/design/sleep.md#searching). A worker already sleeps (counted before the threads
// start) and another searches. Thread 0 pushes to its deque and, seeing a thread counted, goes to
// wake one; the searcher's place keeps it from giving a ticket. In the asymmetric formulation
// nobody pays a heavy barrier here (the sleeper counted first means the searcher's prepare_wait()
// skips it), so the light barrier orders nothing and is left out: the pusher's publication is a
// release store, and the argument rests on the fence in wake_for_work() and the one go_idle()
// takes in place of the heavy barrier it skips, a plain Dekker pair of fences. In the symmetric
// one there are no fences: the publication is seq_cst, as is every access of the pair. Thread 1,
// the searcher (worker_loop.cpp's find_work_or_sleep): one look, which may miss the push; found:
// stop_searching() and, the last searcher, wake the next; not found: stop_searching(), then
// go_idle(): prepare_wait(), the re-check, cancel or commit. No wake-up is lost: once the threads
// have joined, the searcher took the item or saw it at its re-check, or a ticket waits.
template <bool Asymmetric>
struct searcher_scenario : rl::test_suite<searcher_scenario<Asymmetric>, 2> {
    sleep_word word;
    deque_source source;
    item work;
    bool found = false;     // taken on the searcher's look
    bool seen = false;      // seen at its re-check: it goes to take it
    bool committed = false; // went to sleep

    void before() {
        relacy_atomics::asymmetric = Asymmetric;
        (void)word.prepare_wait(); // the worker asleep already
        RL_ASSERT(word.try_start_searching(2));
    }

    void thread(unsigned index) {
        if (index == 0)
            pusher();
        else
            searcher();
    }

    void pusher() {
        work.payload($) = 1;
        source.publish(&work, !Asymmetric);
        // A pool that samples its victims (state/steal_hint.hpp): the push notices searchers as
        // well as sleepers, and notice_push() wakes only if its later load still sees a sleeper.
        if (word.any_of(sleep_word::k_waiters | sleep_word::k_searchers) && word.waiters() != 0)
            wake_for_work(word);
    }

    void searcher() {
        if (source.visible()) {
            found = true;
            const sleep_word::key was = word.stop_searching();
            if (sleep_word::searching_of(was) == 1 && sleep_word::waiters_of(was) != 0)
                (void)word.give_ticket_unless_searching(); // the last searcher wakes the next
            return;
        }
        (void)word.stop_searching();
        const sleep_word::key k = word.prepare_wait();
        RL_ASSERT(sleep_word::waiters_of(k) == 1); // the sleeper: no heavy barrier for us...
        if (Asymmetric)
            relacy_atomics::thread_fence(std::memory_order_seq_cst); // ...but go_idle()'s fence
        if (source.visible()) {
            seen = true;
            if (word.cancel_wait()) // took a ticket: passes the wake-up on
                (void)word.stop_searching();
            return;
        }
        committed = true;
    }

    void after() {
        if (!found && !seen)
            RL_ASSERT(word.try_take_ticket());
    }
};

// Two threads and a few accesses each: every interleaving (a full search) finishes in seconds at
// most (the searcher scenario: 4.3 * 10^6 executions).
constexpr fj::model::search k_search{rl::sched_full};
// Three threads: a full search takes far too long for the suite; every interleaving with up to 4
// preemptions (3.0 * 10^6 executions) takes seconds (5 preemptions: 2.2 * 10^7, 35 s), and the
// mutant below is found with 1.
constexpr fj::model::search k_three_thread_search{rl::sched_bound, 4};

using deque_symmetric = sleep_scenario<deque_source, false>;
using deque_asymmetric = sleep_scenario<deque_source, true>;
using queue_symmetric = sleep_scenario<queue_source, false>;
using queue_asymmetric = sleep_scenario<queue_source, true>;

TEST(sleep_model, deque_push_symmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<deque_symmetric>(k_search));
}

TEST(sleep_model, deque_push_asymmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<deque_asymmetric>(k_search));
}

TEST(sleep_model, submit_symmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<queue_symmetric>(k_search));
}

TEST(sleep_model, submit_asymmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<queue_asymmetric>(k_search));
}

// A deque push only: a submission pairs with the sleepers through seq_cst accesses in either
// formulation, with no barrier involved.
using two_sleepers_deque = two_sleepers_scenario<deque_source>;

TEST(sleep_model, two_sleepers_one_barrier_deque_push) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_sleepers_deque>(k_three_thread_search));
}

TEST(sleep_model, a_push_left_to_a_searcher_is_seen_asymmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<searcher_scenario<true>>(k_search));
}

TEST(sleep_model, a_push_left_to_a_searcher_is_seen_symmetric) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<searcher_scenario<false>>(k_search));
}

TEST(sleep_model, resleep_without_barrier_is_rejected) {
    EXPECT_FALSE(fj::model::check<resleep_without_barrier_scenario<deque_source>>(k_search).passed);
}

constexpr auto acq_rel = std::memory_order::acq_rel;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto seq_cst = std::memory_order::seq_cst;

// Each weakened order below loses a wake-up in the scenario named with it.
struct scenario_mutant {
    mutant m;
    fj::model::outcome (*run)(fj::model::mutation);
    friend void PrintTo(const scenario_mutant& s, std::ostream* out) { *out << s.m.name; }
};

template <class Scenario, const fj::model::search& How = k_search>
fj::model::outcome run_with(fj::model::mutation change) {
    return fj::model::check<Scenario>(How, change);
}

class sleep_mutants : public testing::TestWithParam<scenario_mutant> {};

TEST_P(sleep_mutants, are_rejected) {
    const fj::model::outcome result = GetParam().run(GetParam().m.change);
    FJ_EXPECT_MODEL_REJECTS(result);
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, sleep_mutants,
    testing::Values(
        // The sleeper's half of the symmetric pair: its prewait out of the total order S.
        scenario_mutant{{"prepare_wait_acq_rel",
                         {"::prepare_wait(", access::read_modify_write, seq_cst, acq_rel}},
                        run_with<deque_symmetric>},
        scenario_mutant{{"prepare_wait_release",
                         {"::prepare_wait(", access::read_modify_write, seq_cst, release}},
                        run_with<deque_symmetric>},
        // The pusher's half: its load of the sleeper count out of S.
        scenario_mutant{{"any_of_acquire", {"::any_of(", access::load, seq_cst, acquire}},
                        run_with<deque_symmetric>},
        scenario_mutant{{"any_of_acquire_submit", {"::any_of(", access::load, seq_cst, acquire}},
                        run_with<queue_symmetric>},
        // push_seq_cst()'s publishing store made release: the push of the asymmetric formulation
        // without its barrier.
        scenario_mutant{{"push_seq_cst_release", {"push_with", access::store, seq_cst, release}},
                        run_with<deque_symmetric>},
        // The asymmetric pair without the sleeper's heavy barrier, or the pusher's light one.
        scenario_mutant{{"heavy_barrier_acq_rel", {"::sleeper(", access::fence, seq_cst, acq_rel}},
                        run_with<deque_asymmetric>},
        scenario_mutant{{"light_barrier_acq_rel", {"::pusher(", access::fence, seq_cst, acq_rel}},
                        run_with<deque_asymmetric>},
        // Two sleepers: the barrier of the one that found nobody counted is what the other
        // relies on.
        scenario_mutant{
            {"two_sleepers_heavy_barrier_acq_rel", {"::sleeper(", access::fence, seq_cst, acq_rel}},
            run_with<two_sleepers_deque>},
        // A push left to a searcher: without either fence of the pair the searcher's re-check
        // may miss it while the pusher reads the searcher's place.
        scenario_mutant{
            {"wake_for_work_fence_acq_rel", {"wake_for_work(", access::fence, seq_cst, acq_rel}},
            run_with<searcher_scenario<true>>},
        scenario_mutant{
            {"searcher_go_idle_fence_acq_rel", {"::searcher(", access::fence, seq_cst, acq_rel}},
            run_with<searcher_scenario<true>>}),
    [](const testing::TestParamInfo<scenario_mutant>& info) {
        return std::string(info.param.m.name);
    });

} // namespace
