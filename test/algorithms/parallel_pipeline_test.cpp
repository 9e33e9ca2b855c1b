// fj::parallel_pipeline: oneTBB's "square" example gives the serial answer for any size, token
// limit and worker count; serial_in_order stages see input order, serial stages one item at a
// time, never more than max_tokens items in flight; an exception from any stage reaches the caller
// and a stop request ends the call with fj::operation_cancelled, with no item processed twice,
// none leaked and nothing running after the call returns; move-only items; bad input is rejected.
#include "support.hpp"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

class parallel_pipeline_test : public fj_test::workers_test {
protected:
    fj::scheduler make_pool() const { return fj::scheduler(workers()); }
};

// --- oneTBB's square example
// ----------------------------------------------------------------------

std::string numbers_text(std::size_t n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i)
        text += std::to_string(static_cast<long long>(i * 7919 % 100003) - 50000) +
                (i % 10 == 9 ? "\n" : " ");
    return text;
}

std::string square_serially(const std::string& text) {
    std::istringstream in(text);
    std::string out;
    long long x = 0;
    while (in >> x)
        out += std::to_string(x * x) + "\n";
    return out;
}

std::string square_in_pipeline(fj::scheduler& pool, std::size_t max_tokens,
                               const std::string& text) {
    std::istringstream in(text);
    std::string out;
    fj::parallel_pipeline(
        pool, max_tokens,
        fj::make_filter<void, long long>(fj::filter_mode::serial_in_order,
                                         [&](fj::flow_control& fc) -> long long {
                                             long long x = 0;
                                             if (!(in >> x))
                                                 fc.stop();
                                             return x;
                                         }) &
            fj::make_filter<long long, std::string>(
                fj::filter_mode::parallel,
                [](long long x) { return std::to_string(x * x) + "\n"; }) &
            fj::make_filter<std::string, void>(fj::filter_mode::serial_in_order,
                                               [&](const std::string& s) { out += s; }));
    return out;
}

TEST_P(parallel_pipeline_test, square_gives_the_serial_result) {
    fj::scheduler pool = make_pool();
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{997}, fj_test::scaled(100'000)}) {
        const std::string text = numbers_text(n);
        const std::string expected = square_serially(text);
        for (std::size_t tokens : {1, 2, 7, 64})
            EXPECT_EQ(square_in_pipeline(pool, tokens, text), expected)
                << n << " numbers, " << tokens << " tokens";
    }
}

TEST_P(parallel_pipeline_test, runs_from_inside_a_task_and_on_the_current_scheduler) {
    fj::scheduler pool = make_pool();
    const std::string text = numbers_text(5000);
    std::string out;
    pool.execute([&] {
        std::istringstream in(text);
        fj::parallel_pipeline(8, fj::make_filter<void, long long>(fj::filter_mode::parallel,
                                                                  [&](fj::flow_control& fc) {
                                                                      long long x = 0;
                                                                      if (!(in >> x))
                                                                          fc.stop();
                                                                      return x;
                                                                  }) &
                                     fj::make_filter<long long, void>(
                                         fj::filter_mode::serial_in_order, [&](long long x) {
                                             out += std::to_string(x * x) + "\n";
                                         }));
    });
    EXPECT_EQ(out, square_serially(text));
}

TEST_P(parallel_pipeline_test, pipelines_run_concurrently_from_tasks_of_one_pool) {
    fj::scheduler pool = make_pool();
    std::vector<std::string> texts, outs(8);
    for (std::size_t k = 0; k < outs.size(); ++k)
        texts.push_back(numbers_text(500 + 300 * k));
    fj::parallel_for(
        pool, std::size_t{0}, outs.size(),
        [&](std::size_t k) { outs[k] = square_in_pipeline(pool, 1 + k % 4, texts[k]); },
        fj::grain{1});
    for (std::size_t k = 0; k < outs.size(); ++k)
        EXPECT_EQ(outs[k], square_serially(texts[k])) << "pipeline " << k;
}

// --- Order, exclusion and the token limit -------------------------------------------------------

struct checked_run {
    checked_run(std::size_t n, std::size_t tokens) : items(n), max_tokens(tokens) {}
    std::size_t items;
    std::size_t max_tokens;
    std::size_t produced = 0;
    std::atomic<std::size_t> in_flight{0};
    std::atomic<std::size_t> most_in_flight{0};
    std::atomic<int> inside_out_of_order{0};
    std::atomic<int> inside_in_order{0};
    std::atomic<bool> overlap{false};
    std::size_t next_in_order = 0;
    std::vector<int> seen_out_of_order;
    bool out_of_order_at_in_order = false;
    std::vector<std::size_t> output;
};

void spin(std::size_t k) {
    volatile std::size_t sink = 0;
    for (std::size_t i = 0; i < (k % 7) * 50; ++i)
        sink = sink + i;
}

void run_checked(fj::scheduler& pool, checked_run& r) {
    r.seen_out_of_order.assign(r.items, 0);
    auto enter = [&r](std::atomic<int>& inside) {
        if (inside.fetch_add(1) != 0)
            r.overlap = true;
    };
    fj::parallel_pipeline(
        pool, r.max_tokens,
        fj::make_filter<void, std::size_t>(
            fj::filter_mode::serial_out_of_order,
            [&](fj::flow_control& fc) -> std::size_t {
                if (r.produced == r.items) {
                    fc.stop();
                    return 0;
                }
                const std::size_t now = r.in_flight.fetch_add(1) + 1;
                std::size_t most = r.most_in_flight.load();
                while (now > most && !r.most_in_flight.compare_exchange_weak(most, now)) {
                }
                return r.produced++;
            }) &
            fj::make_filter<std::size_t, std::size_t>(fj::filter_mode::parallel,
                                                      [](std::size_t k) {
                                                          spin(k);
                                                          return k;
                                                      }) &
            fj::make_filter<std::size_t, std::size_t>(fj::filter_mode::serial_out_of_order,
                                                      [&](std::size_t k) {
                                                          enter(r.inside_out_of_order);
                                                          ++r.seen_out_of_order[k];
                                                          spin(k + 3);
                                                          r.inside_out_of_order.fetch_sub(1);
                                                          return k;
                                                      }) &
            fj::make_filter<std::size_t, std::size_t>(fj::filter_mode::parallel,
                                                      [](std::size_t k) {
                                                          spin(k + 1);
                                                          return k;
                                                      }) &
            fj::make_filter<std::size_t, std::size_t>(fj::filter_mode::serial_in_order,
                                                      [&](std::size_t k) {
                                                          enter(r.inside_in_order);
                                                          if (k != r.next_in_order)
                                                              r.out_of_order_at_in_order = true;
                                                          r.next_in_order = k + 1;
                                                          r.inside_in_order.fetch_sub(1);
                                                          return k;
                                                      }) &
            fj::make_filter<std::size_t, void>(fj::filter_mode::serial_in_order,
                                               [&](std::size_t k) {
                                                   r.output.push_back(k);
                                                   r.in_flight.fetch_sub(1);
                                               }));
}

TEST_P(parallel_pipeline_test, serial_stages_keep_order_and_exclusion_and_tokens_are_bounded) {
    fj::scheduler pool = make_pool();
    for (std::size_t tokens : {1, 2, 3, 7, 64}) {
        checked_run r{fj_test::scaled(20'000), tokens};
        run_checked(pool, r);
        EXPECT_FALSE(r.overlap.load()) << tokens << " tokens";
        EXPECT_FALSE(r.out_of_order_at_in_order) << tokens << " tokens";
        EXPECT_LE(r.most_in_flight.load(), tokens);
        EXPECT_EQ(r.in_flight.load(), 0u);
        ASSERT_EQ(r.output.size(), r.items);
        for (std::size_t k = 0; k < r.items; ++k) {
            EXPECT_EQ(r.output[k], k);
            EXPECT_EQ(r.seen_out_of_order[k], 1) << "item " << k;
        }
    }
}

// --- Exceptions and stop requests ---------------------------------------------------------------

// Counts live instances, so a test sees whether every item was destroyed.
struct counted {
    static inline std::atomic<long> live{0};
    std::size_t k = 0;
    explicit counted(std::size_t key) : k(key) { live.fetch_add(1); }
    counted(const counted& o) : k(o.k) { live.fetch_add(1); }
    counted(counted&& o) noexcept : k(o.k) { live.fetch_add(1); }
    counted& operator=(const counted&) = default;
    ~counted() { live.fetch_sub(1); }
};

struct stage_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A pipeline of counted items that fails at item `fail_at` in stage `fail_stage` (0: input,
// 1: the parallel middle, 2: the last), or, with `stop`, requests a stop there instead.
struct failing_run {
    failing_run(std::size_t stage, std::size_t at, std::stop_source* source = nullptr)
        : fail_stage(stage), fail_at(at), stop(source) {}
    std::size_t fail_stage;
    std::size_t fail_at;
    std::stop_source* stop;
    std::atomic<long> calls{0};
    std::mutex seen_mutex;
    std::set<std::size_t> seen_middle, seen_last;
    bool twice = false;
};

void run_failing(fj::scheduler& pool, std::size_t tokens, failing_run& r, std::stop_token token) {
    std::size_t next = 0;
    auto hit = [&r](std::size_t stage, std::size_t k) {
        r.calls.fetch_add(1);
        if (stage == r.fail_stage && k == r.fail_at) {
            if (r.stop != nullptr)
                r.stop->request_stop();
            else
                throw stage_failure("stage " + std::to_string(stage));
        }
    };
    auto note = [&r](std::set<std::size_t>& seen, std::size_t k) {
        std::lock_guard lock(r.seen_mutex);
        if (!seen.insert(k).second)
            r.twice = true;
    };
    fj::parallel_pipeline(
        pool, tokens,
        fj::make_filter<void, counted>(fj::filter_mode::serial_in_order,
                                       [&](fj::flow_control& fc) {
                                           if (next == 100'000) // far beyond any failure point
                                               fc.stop();
                                           hit(0, next);
                                           return counted(next++);
                                       }) &
            fj::make_filter<counted, counted>(fj::filter_mode::parallel,
                                              [&](counted c) {
                                                  note(r.seen_middle, c.k);
                                                  hit(1, c.k);
                                                  return c;
                                              }) &
            fj::make_filter<counted, void>(fj::filter_mode::serial_in_order,
                                           [&](counted c) {
                                               note(r.seen_last, c.k);
                                               hit(2, c.k);
                                           }),
        std::move(token));
}

TEST_P(parallel_pipeline_test, an_exception_from_any_stage_reaches_the_caller_and_nothing_leaks) {
    fj::scheduler pool = make_pool();
    for (std::size_t stage : {0, 1, 2}) {
        for (std::size_t tokens : {1, 4, 32}) {
            failing_run r{stage, 300};
            EXPECT_THROW(run_failing(pool, tokens, r, {}), stage_failure)
                << "stage " << stage << ", " << tokens << " tokens";
            const long calls = r.calls.load();
            EXPECT_EQ(counted::live.load(), 0);
            EXPECT_FALSE(r.twice);
            EXPECT_LT(r.seen_last.size(), 100'000u); // the input stopped early
            // Nothing of this call runs after it returned.
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            EXPECT_EQ(r.calls.load(), calls);
        }
    }
}

TEST_P(parallel_pipeline_test, a_stop_request_from_a_stage_ends_the_call_with_operation_cancelled) {
    fj::scheduler pool = make_pool();
    for (std::size_t stage : {0, 1, 2}) {
        for (std::size_t tokens : {1, 4, 32}) {
            std::stop_source source;
            failing_run r{stage, 300, &source};
            EXPECT_THROW(run_failing(pool, tokens, r, source.get_token()), fj::operation_cancelled)
                << "stage " << stage << ", " << tokens << " tokens";
            const long calls = r.calls.load();
            EXPECT_EQ(counted::live.load(), 0);
            EXPECT_FALSE(r.twice);
            EXPECT_LT(r.seen_last.size(), 100'000u);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            EXPECT_EQ(r.calls.load(), calls);
        }
    }
}

TEST_P(parallel_pipeline_test, a_stop_request_from_another_thread_stops_an_endless_input) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    std::atomic<long> processed{0};
    std::atomic<bool> twice{false};
    std::vector<std::atomic<int>> seen(1 << 22);
    std::size_t next = 0;
    std::thread requester([&] {
        while (processed.load() < 1000)
            std::this_thread::yield();
        source.request_stop();
    });
    EXPECT_THROW(fj::parallel_pipeline(
                     pool, 16,
                     fj::make_filter<void, counted>(fj::filter_mode::serial_in_order,
                                                    [&](fj::flow_control& fc) {
                                                        if (next + 1 == seen.size())
                                                            fc.stop(); // a bound for a broken stop
                                                        return counted(next++);
                                                    }) &
                         fj::make_filter<counted, counted>(fj::filter_mode::parallel,
                                                           [](counted c) { return c; }) &
                         fj::make_filter<counted, void>(fj::filter_mode::serial_out_of_order,
                                                        [&](const counted& c) {
                                                            if (seen[c.k].fetch_add(1) != 0)
                                                                twice = true;
                                                            processed.fetch_add(1);
                                                        }),
                     source.get_token()),
                 fj::operation_cancelled);
    requester.join();
    const long done = processed.load();
    EXPECT_LT(next + 1, seen.size()); // the request stopped the input
    EXPECT_FALSE(twice.load());
    EXPECT_EQ(counted::live.load(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(processed.load(), done);
}

TEST_P(parallel_pipeline_test, a_stop_requested_before_the_call_runs_nothing_after_it) {
    fj::scheduler pool = make_pool();
    std::stop_source source;
    source.request_stop();
    failing_run r{9, 0};
    EXPECT_THROW(run_failing(pool, 4, r, source.get_token()), fj::operation_cancelled);
    EXPECT_EQ(counted::live.load(), 0);
}

// --- Item types
// ------------------------------------------------------------------------------------

TEST_P(parallel_pipeline_test, move_only_items_flow_through) {
    fj::scheduler pool = make_pool();
    int next = 0;
    long sum = 0;
    std::vector<int> order;
    fj::parallel_pipeline(
        pool, 5,
        fj::make_filter<void, std::unique_ptr<int>>(fj::filter_mode::serial_in_order,
                                                    [&](fj::flow_control& fc) {
                                                        if (next == 1000)
                                                            fc.stop();
                                                        return std::make_unique<int>(next++);
                                                    }) &
            fj::make_filter<std::unique_ptr<int>, std::unique_ptr<int>>(fj::filter_mode::parallel,
                                                                        [](std::unique_ptr<int> p) {
                                                                            *p *= 2;
                                                                            return p;
                                                                        }) &
            fj::make_filter<std::unique_ptr<int>, void>(fj::filter_mode::serial_in_order,
                                                        [&](std::unique_ptr<int> p) {
                                                            sum += *p;
                                                            order.push_back(*p);
                                                        }));
    EXPECT_EQ(sum, 999L * 1000);
    ASSERT_EQ(order.size(), 1000u);
    for (int i = 0; i < 1000; ++i)
        EXPECT_EQ(order[static_cast<std::size_t>(i)], 2 * i);
}

TEST_P(parallel_pipeline_test, a_lone_void_input_stage_runs_until_it_stops) {
    fj::scheduler pool = make_pool();
    int calls = 0;
    fj::parallel_pipeline(
        pool, 3, fj::make_filter<void, void>(fj::filter_mode::parallel, [&](fj::flow_control& fc) {
            if (++calls == 100)
                fc.stop();
        }));
    EXPECT_EQ(calls, 100);
}

// --- Bad input
// --------------------------------------------------------------------------------------

TEST_P(parallel_pipeline_test, bad_input_is_rejected_with_invalid_argument) {
    fj::scheduler pool = make_pool();
    int calls = 0;
    auto input =
        fj::make_filter<void, int>(fj::filter_mode::serial_in_order, [&](fj::flow_control& fc) {
            ++calls;
            fc.stop();
            return 0;
        });
    auto output = fj::make_filter<int, void>(fj::filter_mode::parallel, [](int) {});
    try {
        fj::parallel_pipeline(pool, 0, input & output);
        ADD_FAILURE() << "max_tokens 0 accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "fj::parallel_pipeline: max_tokens must be at least 1, not 0");
    }
    EXPECT_THROW(fj::parallel_pipeline(pool, 4, fj::filter<void, void>{}), std::invalid_argument);
    EXPECT_THROW(fj::parallel_pipeline(pool, 4, input & fj::filter<int, void>{}),
                 std::invalid_argument);
    auto moved = std::move(output);
    EXPECT_THROW(fj::parallel_pipeline(pool, 4, input & output), std::invalid_argument);
    EXPECT_EQ(calls, 0);

    int (*null_input)(fj::flow_control&) = nullptr;
    using int_input = fj::filter<void, int>;
    using int_output = fj::filter<int, void>;
    EXPECT_THROW(int_input(fj::filter_mode::parallel, null_input), std::invalid_argument);
    EXPECT_THROW(int_output(fj::filter_mode::parallel, std::function<void(int)>{}),
                 std::invalid_argument);
    EXPECT_THROW(int_output(static_cast<fj::filter_mode>(7), [](int) {}), std::invalid_argument);
    // The scheduler is untouched: a good call works at once.
    fj::parallel_pipeline(pool, 4, input & moved);
    EXPECT_EQ(calls, 1);
}

INSTANTIATE_TEST_SUITE_P(workers, parallel_pipeline_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
