// The injection queue (runtime/src/state/injection_queue.hpp) under Relacy: every accepted item is
// taken exactly once (by a consumer's try_pop(), or by the drain after the threads join, the items
// a close leaves queued), a refused item never comes out, the termination check (close, then the
// exact empty()) never misses an accepted item, and whoever takes an item sees what its producer
// wrote before the push. docs/design/shutdown.md#model says what is covered and what is not.
#include "model/model_support.hpp"
#include "state/injection_queue.hpp"

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

// A queue node as the runtime's task is one: the link, and a payload its producer fills in before
// the push (a plain, Relacy-checked variable: a taker that reads it without the push's publication
// is a data race).
struct node {
    relacy_atomics::atomic<node*> m_next{nullptr};
    rl::var<int> payload;
    bool accepted = false; // what push() answered; read after the threads join
    int taken = 0;
};

using queue_t = fj::detail::injection_queue<node, relacy_atomics>;

// Common parts: the items, and taking one.
template <class Derived, int Threads, int Items>
struct queue_scenario : rl::test_suite<Derived, Threads> {
    queue_t queue;
    node items[Items];

    void produce(int i, bool even_if_closed = false) {
        items[i].payload($) = i + 1;
        items[i].accepted = queue.push(&items[i], even_if_closed) == queue_t::push_result::pushed;
    }

    void take(node* n) {
        RL_ASSERT(n >= items && n < items + Items);
        RL_ASSERT(n->payload($) == static_cast<int>(n - items) + 1);
        ++n->taken;
    }

    // Once the threads have joined: what is still queued comes out, and then the queue is empty.
    // Every accepted item is taken exactly once; a refused one never.
    void drain_and_check() {
        while (node* n = queue.try_pop())
            take(n);
        RL_ASSERT(queue.empty());
        for (node& n : items)
            RL_ASSERT(n.taken == (n.accepted ? 1 : 0));
    }
};

// Two producers push one item each while a consumer takes twice: the consumer races each push,
// including the pop of the last linked item against a producer swinging the tail (the stub's
// re-insertion). Preemption bound 3.
struct producers_consumer : queue_scenario<producers_consumer, 3, 2> {
    void thread(unsigned index) {
        if (index < 2) {
            produce(static_cast<int>(index));
        } else {
            for (int i = 0; i < 2; ++i)
                if (node* n = queue.try_pop())
                    take(n);
        }
    }
    void after() {
        for (node& n : items)
            RL_ASSERT(n.accepted);
        drain_and_check();
    }
};

// One producer pushes three items while a consumer takes three times: with an item behind it, the
// consumer hands out an item it reached by its link alone (no look at the tail), so the link is
// all that publishes it. Preemption bound 3.
struct linked_run : queue_scenario<linked_run, 2, 3> {
    void thread(unsigned index) {
        if (index == 0) {
            for (int i = 0; i < 3; ++i)
                produce(i);
        } else {
            for (int i = 0; i < 3; ++i)
                if (node* n = queue.try_pop())
                    take(n);
        }
    }
    void after() {
        for (node& n : items)
            RL_ASSERT(n.accepted);
        drain_and_check();
    }
};

// One producer pushes two items against two consumers that take once each: the consumer flag
// serialises them (a consumer that finds it taken looks elsewhere). Preemption bound 3.
struct two_consumers : queue_scenario<two_consumers, 3, 2> {
    void thread(unsigned index) {
        if (index == 0) {
            produce(0);
            produce(1);
        } else if (node* n = queue.try_pop()) {
            take(n);
        }
    }
    void after() { drain_and_check(); }
};

// Close racing two pushes: two producers push one item each while a third thread closes the
// queue and then makes the termination check (the exact empty()). An item is accepted or
// refused, never lost: if the check found the queue empty, both pushes were refused; the items
// that were accepted come out exactly once. A pool's own task still pushes after the close
// (even_if_closed). Preemption bound 3.
struct close_racing_push : queue_scenario<close_racing_push, 3, 3> {
    bool closed_and_empty = false;

    void thread(unsigned index) {
        if (index < 2) {
            produce(static_cast<int>(index));
        } else {
            queue.close();
            closed_and_empty = queue.empty();
            RL_ASSERT(queue.is_closed());
            produce(2, true); // work the pool's own tasks add while it drains
        }
    }
    void after() {
        RL_ASSERT(items[2].accepted);
        if (closed_and_empty)
            RL_ASSERT(!items[0].accepted && !items[1].accepted);
        drain_and_check();
    }
};

constexpr fj::model::search k_search{rl::sched_bound, 3};

TEST(injection_queue_model, two_producers_and_a_consumer) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<producers_consumer>(k_search));
}

TEST(injection_queue_model, linked_run) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<linked_run>(k_search));
}

TEST(injection_queue_model, two_consumers) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_consumers>(k_search));
}

TEST(injection_queue_model, close_racing_push) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<close_racing_push>(k_search));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;

// Each weakened order below is rejected by the scenario named with it.
struct scenario_mutant {
    mutant m;
    fj::model::outcome (*run)(fj::model::mutation);
    friend void PrintTo(const scenario_mutant& s, std::ostream* out) { *out << s.m.name; }
};

template <class Scenario>
fj::model::outcome run_with(fj::model::mutation change) {
    return fj::model::check<Scenario>(k_search, change);
}

class injection_queue_mutants : public testing::TestWithParam<scenario_mutant> {};

TEST_P(injection_queue_mutants, are_rejected) {
    const fj::model::outcome result = GetParam().run(GetParam().m.change);
    FJ_EXPECT_MODEL_REJECTS(result);
}

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, injection_queue_mutants,
    testing::Values(
        // The link publishes the node: without release the consumer reads the payload unordered.
        scenario_mutant{{"link_store_relaxed", {"::push(", access::store, release, relaxed}},
                        run_with<producers_consumer>},
        // The link's acquire load: the same publication, from the consumer's side.
        scenario_mutant{{"link_load_relaxed", {"::try_pop(", access::load, acquire, relaxed}},
                        run_with<linked_run>},
        // Taking the consumer flag without acquire: the second consumer reads a stale head and
        // both take the same item.
        scenario_mutant{
            {"consumer_flag_exchange_relaxed",
             {"consumer_guard::consumer_guard(", access::read_modify_write, acquire, relaxed}},
            run_with<two_consumers>},
        // Giving the consumer flag back without release: the same, from the holder's side.
        scenario_mutant{{"consumer_flag_release_relaxed",
                         {"consumer_guard::~consumer_guard(", access::store, release, relaxed}},
                        run_with<two_consumers>}),
    [](const testing::TestParamInfo<scenario_mutant>& info) {
        return std::string(info.param.m.name);
    });

} // namespace
