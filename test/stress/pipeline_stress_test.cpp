// fj::parallel_pipeline with random stage counts, modes, token limits and item counts, some rounds
// failing or stopped at a random item, each round guarded by a progress watchdog. Checked every
// round: serial_in_order stages see input order, every serial stage one item at a time, at most
// max_tokens items in flight, no item passes a stage twice; a normal return means every item
// reached the end; a stop ends it with fj::operation_cancelled, an exception with that exception;
// every item is destroyed and nothing runs after the call returns.
#include "progress_watchdog.hpp"
#include "stress/stress_seed.hpp"
#include "support.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace {

using fj_test::scaled;

class pipeline_stress_test : public fj_test::workers_test {};

struct item {
    static inline std::atomic<long> live{0};
    std::size_t k;
    explicit item(std::size_t key) : k(key) { live.fetch_add(1); }
    item(item&& o) noexcept : k(o.k) { live.fetch_add(1); }
    item(const item&) = delete;
    ~item() { live.fetch_sub(1); }
};

struct planned_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What one round checks; each stage owns a slot.
struct round_state {
    std::size_t items = 0;
    std::size_t fail_stage = 0, fail_at = ~std::size_t{0};
    bool fail_by_stop = false;
    std::stop_source stop;
    std::size_t produced = 0;
    std::atomic<std::size_t> in_flight{0}, most_in_flight{0};
    std::atomic<long> calls{0};
    std::atomic<bool> broken{false}; // an order, exclusion or twice-seen violation
    std::vector<std::unique_ptr<std::atomic<int>>> inside;          // per stage
    std::vector<std::size_t> next_expected;                         // per in-order stage
    std::vector<std::unique_ptr<std::atomic<std::uint8_t>[]>> seen; // per stage, per item
    std::size_t reached_end = 0;
};

void maybe_fail(round_state& r, std::size_t stage, std::size_t k) {
    r.calls.fetch_add(1, std::memory_order_relaxed);
    if (stage != r.fail_stage || k != r.fail_at)
        return;
    if (r.fail_by_stop)
        r.stop.request_stop();
    else
        throw planned_failure("planned");
}

fj::filter<item, item> middle_stage(round_state& r, std::size_t stage, fj::filter_mode mode) {
    return fj::make_filter<item, item>(mode, [&r, stage, mode](item x) {
        const bool serial = mode != fj::filter_mode::parallel;
        if (serial && r.inside[stage]->fetch_add(1) != 0)
            r.broken = true;
        if (r.seen[stage][x.k].fetch_add(1) != 0)
            r.broken = true;
        if (mode == fj::filter_mode::serial_in_order) {
            if (x.k != r.next_expected[stage])
                r.broken = true;
            r.next_expected[stage] = x.k + 1;
        }
        volatile std::size_t sink = 0;
        for (std::size_t i = 0; i < (x.k * 31 + stage) % 97; ++i)
            sink = sink + i;
        if (serial)
            r.inside[stage]->fetch_sub(1);
        maybe_fail(r, stage, x.k);
        return x;
    });
}

TEST_P(pipeline_stress_test, random_pipelines) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    const std::uint64_t seed = fj_test::stress_seed();
    SCOPED_TRACE(fj_test::replay_hint(seed));
    fj_test::rng random(seed + workers());
    const fj::filter_mode modes[] = {fj::filter_mode::parallel, fj::filter_mode::serial_in_order,
                                     fj::filter_mode::serial_out_of_order};
    std::size_t completed = 0, stopped = 0, failed = 0;
    for (std::size_t round = 0; round < scaled(1200); ++round) {
        round_state r;
        r.items = random.below(fj_test::k_sanitized ? 800 : 3000);
        const std::size_t middles = random.below(5);
        const std::size_t stages = middles + 2; // input, middles, output
        const std::size_t tokens =
            random.below(4) == 0 ? 1 + random.below(3) : 1 + random.below(40);
        const std::size_t kind = random.below(4); // 0: stop, 1: exception, else none
        if (kind < 2 && r.items > 0) {
            r.fail_stage = random.below(stages);
            r.fail_at = random.below(r.items);
            r.fail_by_stop = kind == 0;
        }
        for (std::size_t s = 0; s < stages; ++s) {
            r.inside.push_back(std::make_unique<std::atomic<int>>(0));
            r.seen.push_back(std::make_unique<std::atomic<std::uint8_t>[]>(r.items + 1));
        }
        r.next_expected.assign(stages, 0);

        fj::filter<void, item> chain =
            fj::make_filter<void, item>(modes[random.below(3)], [&r](fj::flow_control& fc) {
                if (r.produced == r.items) {
                    fc.stop();
                    return item(0);
                }
                const std::size_t now = r.in_flight.fetch_add(1) + 1;
                std::size_t most = r.most_in_flight.load();
                while (now > most && !r.most_in_flight.compare_exchange_weak(most, now)) {
                }
                const std::size_t k = r.produced++;
                maybe_fail(r, 0, k);
                return item(k);
            });
        for (std::size_t s = 1; s <= middles; ++s)
            chain = chain & middle_stage(r, s, modes[random.below(3)]);
        const fj::filter_mode last_mode = modes[random.below(3)];
        const std::size_t last = stages - 1;
        auto output = fj::make_filter<item, void>(last_mode, [&r, last, last_mode](item x) {
            const bool serial = last_mode != fj::filter_mode::parallel;
            if (serial && r.inside[last]->fetch_add(1) != 0)
                r.broken = true;
            if (r.seen[last][x.k].fetch_add(1) != 0)
                r.broken = true;
            if (last_mode == fj::filter_mode::serial_in_order) {
                if (x.k != r.next_expected[last])
                    r.broken = true;
                r.next_expected[last] = x.k + 1;
            }
            if (serial)
                r.inside[last]->fetch_sub(1);
            r.in_flight.fetch_sub(1);
            maybe_fail(r, last, x.k);
        });

        enum { ok, cancelled, threw } outcome = ok;
        try {
            fj::parallel_pipeline(pool, tokens, chain & output, r.stop.get_token());
        } catch (const fj::operation_cancelled&) {
            outcome = cancelled;
        } catch (const planned_failure&) {
            outcome = threw;
        }
        const long calls = r.calls.load();
        const std::string where = "round " + std::to_string(round) + ", " + std::to_string(stages) +
                                  " stages, " + std::to_string(tokens) + " tokens, " +
                                  std::to_string(r.items) + " items";
        ASSERT_FALSE(r.broken.load()) << where;
        ASSERT_EQ(item::live.load(), 0) << where;
        const bool planned = r.fail_at != ~std::size_t{0};
        ASSERT_EQ(outcome == ok, !planned) << where;
        if (outcome == ok) {
            ++completed;
            // Only here: a dropped item never reaches the output, which the count relies on.
            ASSERT_LE(r.most_in_flight.load(), tokens) << where;
            std::size_t at_end = 0;
            for (std::size_t k = 0; k < r.items; ++k)
                at_end += r.seen[last][k].load();
            ASSERT_EQ(at_end, r.items) << where;
        } else {
            ++(outcome == cancelled ? stopped : failed);
            ASSERT_TRUE(planned) << where;
            ASSERT_EQ(outcome == cancelled, r.fail_by_stop) << where;
        }
        ASSERT_EQ(r.calls.load(), calls) << where << ": a stage ran after the call returned";
        dog.tick();
    }
    EXPECT_GT(completed, 0u);
    EXPECT_GT(stopped, 0u);
    EXPECT_GT(failed, 0u);
}

INSTANTIATE_TEST_SUITE_P(workers, pipeline_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
