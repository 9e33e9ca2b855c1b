// The per-thread table behind fj::enumerable_thread_specific and fj::combinable
// (algorithms/include/forkjoin/detail/per_thread_table.hpp) under Relacy: threads that arrive
// together each create their element once, in their own slot, racing on the segment and on the
// list's head, and a reader that walks the list meanwhile sees every element it reaches fully
// built. docs/design/per-thread-table.md#model says what is covered and what is not.
#include "model/model_support.hpp"

#include <forkjoin/detail/per_thread_table.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

// An element whose constructor writes its payload, a Relacy-checked plain variable: a thread that
// reaches the element without the publication's edge reads it in a data race.
struct cell {
    explicit cell(int id) { payload($) = id; }
    rl::var<int> payload;
};

// Numbers the elements 1, 2, ... in the order they are made (the initializer runs on several
// threads at once).
class numbering_maker final : public fj::detail::element_maker<cell> {
public:
    cell make() const override { return cell(m_next.fetch_add(1, rl::mo_relaxed, $) + 1); }

private:
    mutable rl::atomic<int> m_next{0};
};

using table = fj::detail::per_thread_table<cell, relacy_atomics>;

// Threads 0 .. Writers-1 call local() twice with the numbers in `slots`; the last thread, if
// Reader, walks the list while they do.
template <int Writers, bool Reader>
struct table_scenario
    : rl::test_suite<table_scenario<Writers, Reader>, Writers + (Reader ? 1 : 0)> {
    // Slots 0 and 1 share the first segment (a race to create it); slot 8 is the first of the
    // second.
    static constexpr std::size_t slots[3] = {0, 1, 8};
    table cells{std::make_unique<numbering_maker>()};

    void thread(unsigned index) {
        if (index < static_cast<unsigned>(Writers))
            write(slots[index]);
        else
            read();
    }

    void write(std::size_t slot) {
        bool exists = true;
        cell& first = cells.local_at(slot, exists);
        RL_ASSERT(!exists);
        const int id = first.payload($);
        RL_ASSERT(id >= 1 && id <= Writers);
        cell& again = cells.local_at(slot, exists);
        RL_ASSERT(exists);
        RL_ASSERT(&again == &first);
    }

    // Every element reached is fully built, and none twice.
    void read() {
        int seen = 0;
        int mask = 0;
        for (cell& c : cells) {
            const int id = c.payload($);
            RL_ASSERT(id >= 1 && id <= Writers);
            RL_ASSERT((mask & (1 << id)) == 0);
            mask |= 1 << id;
            ++seen;
        }
        RL_ASSERT(seen <= Writers);
    }

    // Every writer's element is on the list exactly once, found again in its slot.
    void after() {
        int seen = 0;
        int mask = 0;
        for (cell& c : cells) {
            mask |= 1 << c.payload($);
            ++seen;
        }
        RL_ASSERT(seen == Writers);
        RL_ASSERT(mask == ((1 << (Writers + 1)) - 2));
        RL_ASSERT(cells.size() == static_cast<std::size_t>(Writers));
        for (int w = 0; w < Writers; ++w) {
            bool exists = false;
            cells.local_at(slots[w], exists);
            RL_ASSERT(exists);
        }
    }
};

// Two writers in the first segment against a reader. Context bound 2.
using two_writers_and_a_reader = table_scenario<2, true>;
// Three writers, two in the first segment and one in the second, no reader. Context bound 1.
using three_writers = table_scenario<3, false>;
constexpr fj::model::search k_search{rl::sched_bound, 2};
constexpr fj::model::search k_search_three{rl::sched_bound, 1};

TEST(per_thread_table_model, two_writers_and_a_reader) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_writers_and_a_reader>(k_search));
}

TEST(per_thread_table_model, three_writers_in_two_segments) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<three_writers>(k_search_three));
}

// Each weakened order below is rejected: the reader reaches an element whose payload it reads
// with no happens-before edge from the constructor's write.
class per_thread_table_mutants : public testing::TestWithParam<fj::model::mutant> {};

TEST_P(per_thread_table_mutants, are_rejected) {
    FJ_EXPECT_MODEL_REJECTS(
        fj::model::check<two_writers_and_a_reader>(k_search, GetParam().change));
}

constexpr auto relaxed = std::memory_order::relaxed;
constexpr auto acquire = std::memory_order::acquire;
constexpr auto release = std::memory_order::release;
constexpr auto acq_rel = std::memory_order::acq_rel;

INSTANTIATE_TEST_SUITE_P(
    weakened_orders, per_thread_table_mutants,
    testing::Values(
        mutant{"push_relaxed", {"::create(", access::compare_exchange, release, relaxed}},
        mutant{"begin_relaxed", {"::begin(", access::load, acquire, relaxed}},
        mutant{"segment_relaxed", {"::create(", access::compare_exchange, acq_rel, relaxed}}),
    fj::model::mutant_name);

} // namespace
