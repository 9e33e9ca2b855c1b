// oneTBB's partitioners in every form (parallel_for, both parallel_reduce forms, both
// parallel_scan forms) over every range kind (blocked, 2-D, 3-D, a user's): with a grain and no
// partitioner, auto_partitioner or simple_partitioner, no piece is above the grain in any
// dimension; static_partitioner gives about one piece per worker; an affinity_partitioner reused
// across calls sends each piece back to the worker that ran it; every element is visited once.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

class partitioner_test : public fj_test::workers_test {
protected:
    fj::scheduler make_pool() const { return fj::scheduler(workers()); }
};

// A user's range: [lo, hi) divisible while longer than its grain.
struct span_range {
    std::size_t lo, hi, grain;
    span_range(std::size_t l, std::size_t h, std::size_t g) : lo(l), hi(h), grain(g) {}
    span_range(span_range& r, fj::split) : lo(r.lo + (r.hi - r.lo) / 2), hi(r.hi), grain(r.grain) {
        r.hi = lo;
    }
    std::size_t size() const { return hi - lo; }
    bool empty() const { return hi == lo; }
    bool is_divisible() const { return size() > grain; }
};

// What every piece a body saw adds up to: the largest extent in each dimension, the count of
// pieces and of elements.
struct piece_log {
    std::mutex lock;
    std::size_t most[3] = {0, 0, 0};
    std::size_t pieces = 0;
    std::size_t elements = 0;

    void add(std::size_t a, std::size_t b = 1, std::size_t c = 1) {
        std::lock_guard<std::mutex> hold(lock);
        most[0] = std::max(most[0], a);
        most[1] = std::max(most[1], b);
        most[2] = std::max(most[2], c);
        ++pieces;
        elements += a * b * c;
    }
};

// The extents of a piece of each kind.
void log_piece(piece_log& log, const fj::blocked_range<std::size_t>& r) {
    log.add(r.size());
}
void log_piece(piece_log& log, const fj::blocked_range2d<std::size_t>& r) {
    log.add(r.rows().size(), r.cols().size());
}
void log_piece(piece_log& log, const fj::blocked_range3d<std::size_t>& r) {
    log.add(r.pages().size(), r.rows().size(), r.cols().size());
}
void log_piece(piece_log& log, const span_range& r) {
    log.add(r.size());
}

// A body-style reduce body that logs its pieces and sums their elements.
template <class Range>
struct logging_body {
    piece_log* log;
    std::size_t sum = 0;
    explicit logging_body(piece_log& l) : log(&l) {}
    logging_body(logging_body& other, fj::split) : log(other.log) {}
    void operator()(const Range& r) {
        log_piece(*log, r);
        sum += 1;
    }
    void join(logging_body& other) { sum += other.sum; }
};

// A body-style scan body that logs the pieces of its final pass.
template <class Range>
struct logging_scan_body {
    piece_log* log;
    explicit logging_scan_body(piece_log& l) : log(&l) {}
    logging_scan_body(logging_scan_body& other, fj::split) : log(other.log) {}
    template <class Tag>
    void operator()(const Range& r, Tag) {
        if (Tag::is_final_scan())
            log_piece(*log, r);
    }
    void reverse_join(logging_scan_body&) {}
    void assign(logging_scan_body&) {}
};

enum class form { for_loop, reduce_functional, reduce_body, scan_body };

// Runs `f` over `range` with the trailing options and returns its piece log.
template <class Range, class... Opts>
void run_form(fj::scheduler& pool, form f, const Range& range, piece_log& log, Opts&&... opts) {
    switch (f) {
    case form::for_loop:
        fj::parallel_for(
            pool, range, [&](const Range& r) { log_piece(log, r); }, opts...);
        break;
    case form::reduce_functional:
        (void)fj::parallel_reduce(
            pool, range, std::size_t{0},
            [&](const Range& r, std::size_t acc) {
                log_piece(log, r);
                return acc + 1;
            },
            [](std::size_t a, std::size_t b) { return a + b; }, opts...);
        break;
    case form::reduce_body: {
        logging_body<Range> body(log);
        fj::parallel_reduce(pool, range, body, opts...);
        break;
    }
    case form::scan_body:
        // oneTBB's scan takes only the simple and auto partitioners.
        if constexpr ((... &&
                       (!std::is_same_v<std::remove_cvref_t<Opts>, fj::static_partitioner> &&
                        !std::is_same_v<std::remove_cvref_t<Opts>, fj::affinity_partitioner>))) {
            logging_scan_body<Range> body(log);
            fj::parallel_scan(pool, range, body, opts...);
        }
        break;
    }
}

constexpr form k_forms[] = {form::for_loop, form::reduce_functional, form::reduce_body,
                            form::scan_body};

// No piece above the grain, every element once: the rule with a grain (none, auto, simple).
template <class... Opts>
void expect_pieces_within_the_grain(fj::scheduler& pool, Opts&&... opts) {
    for (const form f : k_forms) {
        {
            piece_log log;
            run_form(pool, f, fj::blocked_range<std::size_t>{0, 200'000, 2'500}, log, opts...);
            EXPECT_LE(log.most[0], 2'500u) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 200'000u) << static_cast<int>(f);
        }
        {
            piece_log log;
            run_form(pool, f, fj::blocked_range2d<std::size_t>{0, 200, 8, 0, 300, 8}, log, opts...);
            EXPECT_LE(log.most[0], 8u) << static_cast<int>(f);
            EXPECT_LE(log.most[1], 8u) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 200u * 300u) << static_cast<int>(f);
        }
        {
            piece_log log;
            run_form(pool, f, fj::blocked_range3d<std::size_t>{0, 20, 4, 0, 30, 5, 0, 40, 6}, log,
                     opts...);
            EXPECT_LE(log.most[0], 4u) << static_cast<int>(f);
            EXPECT_LE(log.most[1], 5u) << static_cast<int>(f);
            EXPECT_LE(log.most[2], 6u) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 20u * 30u * 40u) << static_cast<int>(f);
        }
        {
            piece_log log;
            run_form(pool, f, span_range{0, 100'000, 700}, log, opts...);
            EXPECT_LE(log.most[0], 700u) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 100'000u) << static_cast<int>(f);
        }
    }
}

TEST_P(partitioner_test, with_a_grain_and_no_partitioner_no_piece_is_above_the_grain) {
    fj::scheduler pool = make_pool();
    expect_pieces_within_the_grain(pool);
}

TEST_P(partitioner_test, auto_partitioner_is_the_default) {
    fj::scheduler pool = make_pool();
    expect_pieces_within_the_grain(pool, fj::auto_partitioner{});
}

TEST_P(partitioner_test, simple_partitioner_keeps_every_piece_within_the_grain) {
    fj::scheduler pool = make_pool();
    expect_pieces_within_the_grain(pool, fj::simple_partitioner{});
    // With a stop token beside it, in either order.
    std::stop_source never;
    expect_pieces_within_the_grain(pool, never.get_token(), fj::simple_partitioner{});
}

TEST_P(partitioner_test, simple_partitioner_splits_a_range_without_a_grain_to_single_elements) {
    fj::scheduler pool = make_pool();
    for (const form f : k_forms) {
        piece_log log;
        run_form(pool, f, fj::blocked_range<std::size_t>{0, 3'000}, log, fj::simple_partitioner{});
        EXPECT_EQ(log.most[0], 1u) << static_cast<int>(f);
        EXPECT_EQ(log.elements, 3'000u) << static_cast<int>(f);
    }
}

TEST_P(partitioner_test, the_index_forms_and_the_functional_scan_take_a_partitioner) {
    fj::scheduler pool = make_pool();
    std::vector<int> seen(5'000, 0);
    fj::parallel_for(
        pool, 0, 5'000, [&](int i) { ++seen[static_cast<std::size_t>(i)]; },
        fj::simple_partitioner{}, fj::grain{64});
    fj::parallel_for(
        pool, 0, 5'000, [&](int i) { ++seen[static_cast<std::size_t>(i)]; },
        fj::static_partitioner{});
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 2; }));
    const long total = fj::parallel_reduce(
        pool, 0, 5'000, 0L, [](int i) { return long{i}; }, [](long a, long b) { return a + b; },
        fj::static_partitioner{});
    EXPECT_EQ(total, 5'000L * 4'999 / 2);
    // The functional scan: blocks of at most the grain under simple_partitioner.
    std::size_t most = 0;
    std::mutex lock;
    const long scanned = fj::parallel_scan(
        pool, fj::blocked_range<int>{0, 5'000, 300}, 0L,
        [&](const fj::blocked_range<int>& r, long sum, bool) {
            {
                std::lock_guard<std::mutex> hold(lock);
                most = std::max(most, r.size());
            }
            for (int i = r.begin(); i != r.end(); ++i)
                sum += i;
            return sum;
        },
        [](long a, long b) { return a + b; }, fj::simple_partitioner{});
    EXPECT_EQ(scanned, 5'000L * 4'999 / 2);
    EXPECT_LE(most, 300u);
}

TEST_P(partitioner_test, static_partitioner_gives_about_one_piece_per_worker) {
    fj::scheduler pool = make_pool();
    const std::size_t p = workers();
    const form static_forms[] = {form::for_loop, form::reduce_functional, form::reduce_body};
    for (const form f : static_forms) {
        {
            piece_log log;
            run_form(pool, f, fj::blocked_range<std::size_t>{0, 100'000}, log,
                     fj::static_partitioner{});
            EXPECT_GE(log.pieces, p) << static_cast<int>(f);
            EXPECT_LT(log.pieces, 2 * p) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 100'000u);
        }
        {
            piece_log log;
            run_form(pool, f, fj::blocked_range2d<std::size_t>{0, 300, 0, 300}, log,
                     fj::static_partitioner{});
            EXPECT_GE(log.pieces, p) << static_cast<int>(f);
            EXPECT_LT(log.pieces, 2 * p) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 90'000u);
        }
        {
            piece_log log;
            run_form(pool, f, span_range{0, 100'000, 1}, log, fj::static_partitioner{});
            EXPECT_GE(log.pieces, p) << static_cast<int>(f);
            EXPECT_LT(log.pieces, 2 * p) << static_cast<int>(f);
        }
        {
            // Never below the grain: halves of a range divisible while above 1,000 stop at 750.
            piece_log log;
            run_form(pool, f, fj::blocked_range<std::size_t>{0, 3'000, 1'000}, log,
                     fj::static_partitioner{});
            EXPECT_LE(log.pieces, 4u) << static_cast<int>(f);
            EXPECT_EQ(log.elements, 3'000u);
        }
    }
}

// Spins for about `us` microseconds: pieces long enough that every worker gets to its own.
void busy(int us) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < until) {
    }
}

// Runs the loop `calls` times with one affinity_partitioner; true once a call sent every piece
// to the worker that ran it in the call before. Each piece waits (up to 200 ms) until every worker
// has started one, so that a late one finds its own pieces still there. The test calls the loop
// from a task of the pool, so the threads that take part are exactly its workers; a call from
// outside also runs on its caller, with whichever workers it wakes (docs/design/affinity.md).
template <class Loop>
bool some_replay_sends_every_piece_home(Loop loop, std::size_t workers, int calls) {
    fj::affinity_partitioner ap;
    std::map<std::size_t, std::size_t> before;
    for (int call = 0; call < calls; ++call) {
        std::map<std::size_t, std::size_t> now;
        std::set<std::size_t> arrived;
        std::atomic<std::size_t> arrivals{0};
        std::mutex lock;
        loop(ap, [&](std::size_t piece) {
            const std::size_t w = fj::current_worker_index();
            {
                std::lock_guard<std::mutex> hold(lock);
                now[piece] = w;
                if (arrived.insert(w).second)
                    arrivals.fetch_add(1);
            }
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
            while (arrivals.load() < workers && std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
        });
        if (call > 0 && now == before)
            return true;
        before = std::move(now);
    }
    return false;
}

TEST_P(partitioner_test, an_affinity_partitioner_sends_each_piece_back_to_its_worker) {
    if (workers() > std::thread::hardware_concurrency())
        GTEST_SKIP() << "more workers than CPUs: a worker may get no CPU during a whole call";
    fj::scheduler pool = make_pool();
    const int piece_us = fj_test::k_sanitized ? 2'000 : 500;
    EXPECT_TRUE(some_replay_sends_every_piece_home(
        [&](fj::affinity_partitioner& ap, auto record) {
            pool.submit([&] {
                    fj::parallel_for(
                        pool, fj::blocked_range<std::size_t>{0, 64},
                        [&](const fj::blocked_range<std::size_t>& r) {
                            record(r.begin());
                            busy(piece_us);
                        },
                        ap);
                })
                .get();
        },
        workers(), 20));
    EXPECT_TRUE(some_replay_sends_every_piece_home(
        [&](fj::affinity_partitioner& ap, auto record) {
            pool.submit([&] {
                    fj::parallel_for(
                        pool, span_range{0, 64, 1},
                        [&](const span_range& r) {
                            record(r.lo);
                            busy(piece_us);
                        },
                        ap);
                })
                .get();
        },
        workers(), 20));
}

TEST_P(partitioner_test, an_affinity_partitioner_visits_everything_once_in_every_form) {
    fj::scheduler pool = make_pool();
    fj::affinity_partitioner ap;
    for (int call = 0; call < 3; ++call) {
        for (const form f : {form::for_loop, form::reduce_functional, form::reduce_body}) {
            piece_log log;
            run_form(pool, f, fj::blocked_range<std::size_t>{0, 10'007}, log, ap);
            EXPECT_EQ(log.elements, 10'007u);
            EXPECT_LE(log.pieces, 8 * workers()); // 4 per worker, or the next power of two
            piece_log grid;
            run_form(pool, f, fj::blocked_range2d<std::size_t>{0, 50, 0, 70}, grid, ap);
            EXPECT_EQ(grid.elements, 3'500u);
        }
        std::vector<int> seen(1'000, 0);
        fj::parallel_for(
            pool, 0, 1'000, [&](int i) { ++seen[static_cast<std::size_t>(i)]; }, ap);
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
        // Deterministic and in serial order: a non-commutative reduce (concatenation order).
        const long digits = fj::parallel_reduce(
            pool, fj::blocked_range<int>{0, 9}, 0L,
            [](const fj::blocked_range<int>& r, long acc) {
                for (int i = r.begin(); i != r.end(); ++i)
                    acc = acc * 10 + (i + 1);
                return acc;
            },
            [](long a, long b) {
                long scale = 1;
                for (long x = b; x > 0; x /= 10)
                    scale *= 10;
                return a * scale + b;
            },
            ap);
        EXPECT_EQ(digits, 123456789L);
        // A user's range halves into the next power of two at or above 4 pieces per worker.
        std::size_t expected = 1;
        while (expected < 4 * workers())
            expected *= 2;
        piece_log sink;
        logging_body<span_range> body(sink);
        fj::parallel_reduce(pool, span_range{0, 5'000, 1}, body, ap);
        EXPECT_EQ(body.sum, expected);
        EXPECT_EQ(sink.elements, 5'000u);
    }
}

TEST_P(partitioner_test, an_affinity_loop_stops_and_reports_the_first_exception) {
    fj::scheduler pool = make_pool();
    fj::affinity_partitioner ap;
    try {
        fj::parallel_for(
            pool, 0, 4'000,
            [](int i) {
                if (i == 1'234 || i == 3'000)
                    throw std::runtime_error(std::to_string(i));
            },
            ap);
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "1234");
    }
    std::stop_source stop;
    stop.request_stop();
    int ran = 0;
    EXPECT_THROW(fj::parallel_for(
                     pool, 0, 100, [&](int) { ++ran; }, ap, stop.get_token()),
                 fj::operation_cancelled);
    EXPECT_EQ(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(workers, partitioner_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
