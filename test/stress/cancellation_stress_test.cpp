// Stop requests at random moments, from bodies and from an outside thread, during loops,
// reductions, task groups and async calls, each run guarded by a progress watchdog. Checked every
// round: no iteration or task runs twice; a call that returned normally ran everything; one that
// threw fj::operation_cancelled had its stop requested; nothing runs after the call returned.
#include "progress_watchdog.hpp"
#include "support.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <thread>
#include <vector>

namespace {

using fj_test::scaled;

class cancellation_stress_test : public fj_test::workers_test {};

// Requests the stop once `trigger` bodies have started (from the body that reaches it, or from an
// outside thread when `from_outside`), or never when trigger is past the end.
class stopper {
public:
    stopper(std::size_t trigger, bool from_outside) : m_trigger(trigger), m_outside(from_outside) {
        if (m_outside)
            m_thread = std::thread([this] {
                while (!m_done.load() && m_started.load() < m_trigger)
                    std::this_thread::yield();
                if (!m_done.load())
                    m_source.request_stop();
            });
    }
    ~stopper() { finish(); }

    std::stop_token token() const { return m_source.get_token(); }
    bool stopped() const { return m_source.stop_requested(); }

    void body_started() {
        if (m_started.fetch_add(1, std::memory_order_relaxed) + 1 == m_trigger && !m_outside)
            m_source.request_stop();
    }

    // The call returned: the outside thread gives up if it has not fired yet.
    void finish() {
        m_done.store(true);
        if (m_thread.joinable())
            m_thread.join();
    }

private:
    std::stop_source m_source;
    std::size_t m_trigger;
    bool m_outside;
    std::atomic<std::size_t> m_started{0};
    std::atomic<bool> m_done{false};
    std::thread m_thread;
};

// How many rounds ended each way: both must occur, or the test proved nothing.
struct outcomes {
    std::size_t cancelled = 0;
    std::size_t completed = 0;
    ~outcomes() {
        EXPECT_GT(cancelled, 0u);
        EXPECT_GT(completed, 0u);
    }
};

// Runs one call under a random stop; `call` returns normally or throws operation_cancelled.
// Checks the outcome against the per-item run counts.
template <class Call>
void check_round(fj_test::rng& random, std::size_t n, std::size_t round, outcomes& seen,
                 Call&& call) {
    std::vector<std::atomic<std::uint8_t>> runs(n);
    // A third of the rounds are never stopped; the rest stop after a random number of bodies.
    const std::size_t trigger = random.below(3) == 0 ? n + 1 : random.below(n + 1);
    stopper stop(trigger, random.below(2) == 0);
    bool cancelled = false;
    try {
        call(runs, stop);
    } catch (const fj::operation_cancelled&) {
        cancelled = true;
    }
    stop.finish();
    ++(cancelled ? seen.cancelled : seen.completed);
    std::size_t ran = 0;
    for (auto& r : runs) {
        const unsigned v = r.load();
        ASSERT_LE(v, 1u) << "round " << round;
        ran += v;
    }
    if (cancelled) {
        ASSERT_TRUE(stop.stopped()) << "round " << round;
    } else {
        ASSERT_EQ(ran, n) << "round " << round << (stop.stopped() ? " (stopped late)" : "");
    }
    std::size_t after = 0;
    for (auto& r : runs)
        after += r.load();
    ASSERT_EQ(after, ran) << "round " << round << ": a body ran after the call returned";
}

TEST_P(cancellation_stress_test, loops_stopped_at_random_moments) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    outcomes seen;
    fj_test::rng random(101 + workers());
    for (std::size_t round = 0; round < scaled(400); ++round) {
        const std::size_t n = 1 + random.below(20'000);
        const std::size_t g = random.below(3) == 0 ? 0 : 1 + random.below(64);
        check_round(random, n, round, seen, [&](auto& runs, stopper& stop) {
            auto body = [&](std::size_t i) {
                stop.body_started();
                runs[i].fetch_add(1, std::memory_order_relaxed);
            };
            if (g == 0)
                fj::parallel_for(pool, std::size_t{0}, n, body, stop.token());
            else
                fj::parallel_for(pool, std::size_t{0}, n, body, stop.token(), fj::grain{g});
        });
        dog.tick();
    }
}

TEST_P(cancellation_stress_test, nested_loops_and_reductions_stopped_at_random_moments) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    outcomes seen;
    fj_test::rng random(202 + workers());
    for (std::size_t round = 0; round < scaled(200); ++round) {
        const std::size_t outer = 1 + random.below(40), inner = 1 + random.below(200);
        check_round(random, outer * inner, round, seen, [&](auto& runs, stopper& stop) {
            // Both levels share the token: the inner reductions end first, their
            // operation_cancelled ends the outer body, and the outer loop reports the same.
            fj::parallel_for(
                pool, std::size_t{0}, outer,
                [&](std::size_t i) {
                    const long sum = fj::parallel_reduce(
                        std::size_t{0}, inner, 0L,
                        [&](std::size_t j) {
                            stop.body_started();
                            runs[i * inner + j].fetch_add(1, std::memory_order_relaxed);
                            return long{1};
                        },
                        std::plus<>{}, stop.token());
                    if (sum != static_cast<long>(inner))
                        throw std::logic_error("a reduction lost a term");
                },
                stop.token());
        });
        dog.tick();
    }
}

TEST_P(cancellation_stress_test, task_groups_stopped_at_random_moments) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    outcomes seen;
    fj_test::rng random(303 + workers());
    for (std::size_t round = 0; round < scaled(300); ++round) {
        const std::size_t width = 1 + random.below(30), depth = 1 + random.below(30);
        check_round(random, width * depth, round, seen, [&](auto& runs, stopper& stop) {
            // Tasks run from outside and from inside tasks, on one group.
            fj::task_group group(pool, stop.token());
            for (std::size_t i = 0; i < width; ++i)
                group.run([&, i] {
                    for (std::size_t j = 0; j < depth; ++j)
                        group.run([&, i, j] {
                            stop.body_started();
                            runs[i * depth + j].fetch_add(1, std::memory_order_relaxed);
                        });
                });
            group.wait();
        });
        dog.tick();
    }
}

TEST_P(cancellation_stress_test, async_calls_stopped_at_random_moments) {
    fj::scheduler pool(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watched = dog.watch(pool);
    outcomes seen;
    fj_test::rng random(404 + workers());
    for (std::size_t round = 0; round < scaled(300); ++round) {
        const std::size_t n = 1 + random.below(300);
        check_round(random, n, round, seen, [&](auto& runs, stopper& stop) {
            std::vector<fj::future<void>> calls;
            calls.reserve(n);
            for (std::size_t i = 0; i < n; ++i)
                calls.push_back(fj::async(pool, stop.token(), [&, i] {
                    stop.body_started();
                    runs[i].fetch_add(1, std::memory_order_relaxed);
                }));
            bool cancelled = false;
            for (auto& c : calls) {
                try {
                    c.get(); // every future is waited for, cancelled or not
                } catch (const fj::operation_cancelled&) {
                    cancelled = true;
                }
            }
            if (cancelled)
                throw fj::operation_cancelled("some call was skipped");
        });
        dog.tick();
    }
}

INSTANTIATE_TEST_SUITE_P(workers, cancellation_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
