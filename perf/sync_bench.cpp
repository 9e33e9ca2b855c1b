// Waiting inside tasks (docs/performance.md#sync): the task-parking primitives (docs/sync.md)
// against the std types that block the worker, in one process. Rounds interleave the variants of
// a part (the order rotating by one per round); each part prints per variant the median and range
// over the rounds and the per-round ratios fj / std.
//
//   sync_bench [--rounds 11] [--parts latch,sleeps,lock,counter,pipeline,wake,sleepers,pingpong,
//              stages,contended8,copingpong,shared] [--meetings 100] [--pairs 10000000]
//              [--iterations 100000]
//              [--repeat 10] [--items 100000] [--capacity 64] [--work 0] [--samples 2000]
//              [--gap 50] [--sleepers 10000] [--async-threads 10000] [--sleeper-rounds 3]
//              [--messages 100000] [--stage-items 1000000] [--stage-work 4] [--tokens 8]
//              [--contenders 8] [--lock-iterations 20000] [--inside 150] [--outside 150]
//
// latch     4 tasks on a fresh 2-worker pool each arrive_and_wait on a latch of 4: std::latch
//           (2 workers block, the rescue starts spares for the other 2 tasks) against fj::latch
//           (2 tasks park, the workers run the other 2). The first meeting on the fresh pool,
//           then the mean of --meetings more on the same pool; the spares started.
// sleeps    8 tasks each sleeping 100 ms on a fresh 2-worker pool: std::this_thread::sleep_for
//           (the rescue), fj::this_task::sleep_for, and 8 std::async threads; the batch's wall
//           time and the spares started.
// lock      uncontended lock + unlock, --pairs of them: std::mutex against fj::mutex, on main
//           and inside a task of a 2-worker pool; ns per pair.
// counter   fj::parallel_for over --iterations, each taking the mutex around ++counter, run
//           from a task of a pool of 1 and of 2 workers (one pool per count, kept): std::mutex
//           against fj::mutex; a round's time is the mean of --repeat loops; ns per iteration.
// pipeline  2 producers send --items ints (half each) through a bounded queue of --capacity to
//           2 consumers that sum them (plus --work multiply-adds per item): fj::channel in fj
//           tasks, a std::mutex + std::condition_variable queue in the same fj tasks (which block
//           their workers: the rescue applies), and the std queue between 4 std::threads. The fj
//           variants get a fresh pool per round and submit the producers first; the sum is
//           checked. For scale, the sum and work in one serial loop, and the channel's variant
//           on a pool of 1 worker.
// wake      wake-to-run latency on a fresh 2-worker pool: task A waits on a binary semaphore,
//           task B (holding the other worker) waits --gap µs after A announced its wait, takes a
//           steady_clock time and releases; A takes the time it runs again. --samples per round;
//           per round the median and the 99th percentile, µs: fj::binary_semaphore (A parks)
//           against std::binary_semaphore (A blocks its worker).
// sleepers  --sleepers tasks each in fj::this_task::sleep_for(100 ms) on a fresh 2-worker pool,
//           then the same batch again on that pool (its fiber stacks already mapped), against
//           --async-threads std::async threads each sleeping 100 ms (a thread creation that
//           fails is reported); the batch's wall time; --sleeper-rounds rounds.
// pingpong  two tasks pass a counter back and forth through two fj::channel<int>, --messages
//           messages (each received value + 1 is sent on), capacity 0 and 1, on a fresh pool of
//           1 and of 2 workers; for scale, the std queue of capacity 1 between 2 std::threads;
//           ns per message.
// stages    --stage-items ints through 4 stages of --stage-work multiply-adds each on a fresh
//           2-worker pool: one task per stage joined by 3 fj::channels of --capacity, against
//           fj::parallel_pipeline (serial_in_order first and last stage, parallel middle ones,
//           --tokens tokens) run from a task of the pool; the sum is checked against one serial
//           loop, also timed.
// contended8  --contenders tasks on a fresh 2-worker pool, each --lock-iterations times taking
//           the mutex around --inside multiply-adds on shared data, then --outside multiply-adds
//           of its own: std::mutex against fj::mutex; ms per run; the shared result is checked.
//           For scale, the same work in one serial loop with no lock.
// shared    read-mostly: --contenders tasks on a fresh 2-worker pool, each --lock-iterations
//           times: one time in 10 the exclusive lock around --inside multiply-adds on shared
//           data, else the shared lock around --inside multiply-adds of the shared value into
//           its own, then --outside of its own: std::shared_mutex against fj::shared_mutex
//           (<forkjoin/shared_mutex.hpp>); ms per run; the shared result is checked.
// copingpong  the pingpong with fj::task coroutines that co_await send_async / receive_async
//           (<forkjoin/sync_await.hpp>: a waiting coroutine holds no fiber), against the parked
//           tasks of pingpong, capacity 0, on a fresh pool of 1 and of 2 workers; ns per message.
#include "driver_cli.hpp"
#include "measure.hpp"
#include "paired_rounds.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <iterator>
#include <latch>
#include <mutex>
#include <optional>
#include <semaphore>
#include <shared_mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <forkjoin/forkjoin.hpp>
#include <forkjoin/shared_mutex.hpp>
#include <forkjoin/sync_await.hpp>

namespace {

using namespace std::chrono_literals;
using fj_perf::spread_of;

const char* const all_parts[] = {"latch",    "sleeps",     "lock",       "counter",
                                 "pipeline", "wake",       "sleepers",   "pingpong",
                                 "stages",   "contended8", "copingpong", "shared"};

struct options {
    int rounds = 11;
    int meetings = 100;
    int pairs = 10'000'000;
    int iterations = 100'000;
    int repeat = 10;
    int items = 100'000;
    int capacity = 64;
    int work = 0;
    int samples = 2000;
    int gap_us = 50;
    int sleepers = 10'000;
    int async_threads = 10'000;
    int sleeper_rounds = 3;
    int messages = 100'000;
    int stage_items = 1'000'000;
    int stage_work = 4;
    int tokens = 8;
    int contenders = 8;
    int lock_iterations = 20'000;
    int inside = 150;
    int outside = 150;
    std::vector<std::string> parts{std::begin(all_parts), std::end(all_parts)};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli(
        "sync_bench",
        "[--rounds 11] [--parts latch,sleeps,lock,counter,pipeline,wake,sleepers,pingpong,stages,"
        "contended8,copingpong,shared] [--meetings 100] [--pairs 10000000] [--iterations 100000] "
        "[--repeat 10] [--items 100000] [--capacity 64] [--work 0] [--samples 2000] [--gap 50] "
        "[--sleepers 10000] [--async-threads 10000] [--sleeper-rounds 3] [--messages 100000] "
        "[--stage-items 1000000] [--stage-work 4] [--tokens 8] [--contenders 8] "
        "[--lock-iterations 20000] [--inside 150] [--outside 150]",
        argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--meetings") {
            o.meetings = cli.integer(value, 1, name);
        } else if (name == "--pairs") {
            o.pairs = cli.integer(value, 1, name);
        } else if (name == "--iterations") {
            o.iterations = cli.integer(value, 1, name);
        } else if (name == "--repeat") {
            o.repeat = cli.integer(value, 1, name);
        } else if (name == "--items") {
            o.items = cli.integer(value, 2, name);
        } else if (name == "--capacity") {
            o.capacity = cli.integer(value, 1, name);
        } else if (name == "--work") {
            o.work = cli.integer(value, 0, name);
        } else if (name == "--samples") {
            o.samples = cli.integer(value, 1, name);
        } else if (name == "--gap") {
            o.gap_us = cli.integer(value, 0, name);
        } else if (name == "--sleepers") {
            o.sleepers = cli.integer(value, 1, name);
        } else if (name == "--async-threads") {
            o.async_threads = cli.integer(value, 1, name);
        } else if (name == "--sleeper-rounds") {
            o.sleeper_rounds = cli.integer(value, 1, name);
        } else if (name == "--messages") {
            o.messages = cli.integer(value, 2, name);
        } else if (name == "--stage-items") {
            o.stage_items = cli.integer(value, 1, name);
        } else if (name == "--stage-work") {
            o.stage_work = cli.integer(value, 0, name);
        } else if (name == "--tokens") {
            o.tokens = cli.integer(value, 1, name);
        } else if (name == "--contenders") {
            o.contenders = cli.integer(value, 1, name);
        } else if (name == "--lock-iterations") {
            o.lock_iterations = cli.integer(value, 1, name);
        } else if (name == "--inside") {
            o.inside = cli.integer(value, 0, name);
        } else if (name == "--outside") {
            o.outside = cli.integer(value, 0, name);
        } else if (name == "--parts") {
            o.parts = fj_perf::split(value);
            for (const auto& p : o.parts)
                if (std::find(std::begin(all_parts), std::end(all_parts), p) == std::end(all_parts))
                    cli.fail("unknown part '" + p +
                             "' (latch, sleeps, lock, counter, pipeline, wake, sleepers, "
                             "pingpong, stages, contended8, copingpong)");
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

bool wants(const options& o, const char* part) {
    return std::find(o.parts.begin(), o.parts.end(), part) != o.parts.end();
}

// A pool of `workers` with the defaults otherwise (parking on, the rescue on).
fj::scheduler_options pool_options(int workers) {
    fj::scheduler_options so;
    so.workers = static_cast<std::size_t>(workers);
    return so;
}

// Runs a task on a new pool, so that no timing includes its workers' start.
void warm(fj::scheduler& pool) {
    pool.submit([] {}).get();
}

[[noreturn]] void wrong(const char* what) {
    std::fprintf(stderr, "sync_bench: wrong result in %s\n", what);
    std::exit(1);
}

// One part's variants: times[i][r] is variant i's time in round r, and, where a pool ran it,
// per round the spares it started and the tasks it parked.
struct variant {
    std::string name;
    std::vector<double> times;
    std::vector<double> spares;
    std::vector<double> parks;
};

void record_pool(variant& v, const fj::scheduler& pool) {
    const auto s = pool.stats();
    v.spares.push_back(static_cast<double>(s.spares_started));
    v.parks.push_back(static_cast<double>(s.total().parks));
}

// Round r runs every variant once, starting one further than round r - 1.
template <class RunVariant>
void interleave(int rounds, std::size_t variants, RunVariant&& run) {
    for (int r = 0; r < rounds; ++r)
        fj_perf::for_each_row_rotated(r, variants, run);
}

void print_head(const char* unit) {
    std::printf("  %-34s %10s %10s %10s   %-15s %s\n", "", unit, "min", "max", "spares med/max",
                "parks (median)");
}

void print_variant(const variant& v, const char* format = "%10.3f") {
    const auto t = spread_of(v.times);
    std::printf("  %-34s %s %s %s", v.name.c_str(), fj_perf::fmt(format, t.median).c_str(),
                fj_perf::fmt(format, t.lo).c_str(), fj_perf::fmt(format, t.hi).c_str());
    if (!v.spares.empty()) {
        const auto s = spread_of(v.spares);
        std::printf("   %6.0f / %-6.0f %8.0f", s.median, s.hi, fj_perf::median(v.parks));
    }
    std::printf("\n");
}

// Each round's time, in the order run, with the tasks parked where a pool ran it: shows whether
// a wide range is two regimes or noise.
void print_rounds(const variant& v, const char* format = "%.1f") {
    std::printf("  %s per round:", v.name.c_str());
    for (std::size_t r = 0; r < v.times.size(); ++r) {
        std::printf(" %s", fj_perf::fmt(format, v.times[r]).c_str());
        if (r < v.parks.size())
            std::printf(" (%.0f)", v.parks[r]);
    }
    std::printf("\n");
}

// The per-round ratio a / b: median and range.
void print_ratio(const variant& a, const variant& b) {
    std::vector<double> ratio;
    for (std::size_t r = 0; r < a.times.size() && r < b.times.size(); ++r)
        ratio.push_back(a.times[r] / b.times[r]);
    const auto s = spread_of(ratio);
    std::printf("  %s / %s = %.3f (%.3f-%.3f)\n", a.name.c_str(), b.name.c_str(), s.median, s.lo,
                s.hi);
}

double ms_of(const std::function<void()>& f) {
    return fj_perf::seconds_of(f) * 1e3;
}

// --- latch ------------------------------------------------------------------------------------

// 4 tasks meet at a latch of 4 on `pool`; ms from the first submit to the last get().
template <class Latch>
double meeting_ms(fj::scheduler& pool) {
    Latch latch(4);
    std::vector<fj::future<void>> tasks;
    tasks.reserve(4);
    return ms_of([&] {
        for (int i = 0; i < 4; ++i)
            tasks.push_back(pool.submit([&latch] { latch.arrive_and_wait(); }));
        for (auto& t : tasks)
            t.get();
    });
}

void latch_part(const options& o) {
    std::printf("\nlatch: 4 tasks arrive_and_wait on a latch of 4, a fresh 2-worker pool per "
                "round, %d rounds\n",
                o.rounds);
    variant first[2] = {{"std::latch, first meeting", {}, {}, {}},
                        {"fj::latch, first meeting", {}, {}, {}}};
    variant next[2] = {{"std::latch, next meetings (mean)", {}, {}, {}},
                       {"fj::latch, next meetings (mean)", {}, {}, {}}};
    interleave(o.rounds, 2, [&](std::size_t i) {
        fj::scheduler pool(pool_options(2)); // fresh: no spare left from an earlier round
        warm(pool);
        first[i].times.push_back(i == 0 ? meeting_ms<std::latch>(pool)
                                        : meeting_ms<fj::latch>(pool));
        record_pool(first[i], pool);
        double sum = 0;
        for (int m = 0; m < o.meetings; ++m)
            sum += i == 0 ? meeting_ms<std::latch>(pool) : meeting_ms<fj::latch>(pool);
        next[i].times.push_back(sum / o.meetings);
        record_pool(next[i], pool); // counts since the pool started
    });
    print_head("ms median");
    for (const auto& v : first)
        print_variant(v);
    std::printf("  (next: the mean of %d more meetings on the same pool; spares and parks "
                "counted from the pool's start)\n",
                o.meetings);
    for (const auto& v : next)
        print_variant(v);
    print_ratio(first[1], first[0]);
    print_ratio(next[1], next[0]);
}

// --- sleeps -----------------------------------------------------------------------------------

template <class Sleep>
double fj_sleeps_ms(fj::scheduler& pool, Sleep sleep) {
    std::vector<fj::future<void>> tasks;
    tasks.reserve(8);
    return ms_of([&] {
        for (int i = 0; i < 8; ++i)
            tasks.push_back(pool.submit(sleep));
        for (auto& t : tasks)
            t.get();
    });
}

double std_async_sleeps_ms() {
    std::vector<std::future<void>> threads;
    threads.reserve(8);
    return ms_of([&] {
        for (int i = 0; i < 8; ++i)
            threads.push_back(
                std::async(std::launch::async, [] { std::this_thread::sleep_for(100ms); }));
        for (auto& t : threads)
            t.get();
    });
}

void sleeps_part(const options& o) {
    std::printf("\nsleeps: 8 tasks sleeping 100 ms each, a fresh 2-worker pool per round, ms, %d "
                "rounds\n",
                o.rounds);
    variant v[3] = {{"std::this_thread::sleep_for in tasks", {}, {}, {}},
                    {"fj::this_task::sleep_for in tasks", {}, {}, {}},
                    {"std::async threads", {}, {}, {}}};
    interleave(o.rounds, 3, [&](std::size_t i) {
        if (i == 2) {
            v[i].times.push_back(std_async_sleeps_ms());
            return;
        }
        fj::scheduler pool(pool_options(2));
        warm(pool);
        v[i].times.push_back(i == 0 ? fj_sleeps_ms(pool, [] { std::this_thread::sleep_for(100ms); })
                                    : fj_sleeps_ms(pool, [] { fj::this_task::sleep_for(100ms); }));
        record_pool(v[i], pool);
    });
    print_head("ms median");
    for (const auto& x : v)
        print_variant(x, "%10.1f");
    print_ratio(v[1], v[0]);
    print_ratio(v[1], v[2]);
}

// --- lock -------------------------------------------------------------------------------------

// ns per uncontended lock + unlock around an increment.
template <class Mutex>
double pairs_ns(int pairs) {
    Mutex m;
    long counter = 0;
    const double s = fj_perf::seconds_of([&] {
        for (int i = 0; i < pairs; ++i) {
            m.lock();
            ++counter;
            m.unlock();
        }
    });
    if (counter != pairs)
        wrong("lock");
    return s * 1e9 / pairs;
}

void lock_part(const options& o) {
    std::printf("\nlock: uncontended lock + unlock, %d pairs, ns per pair, %d rounds\n", o.pairs,
                o.rounds);
    fj::scheduler pool(pool_options(2));
    warm(pool);
    variant v[4] = {{"std::mutex, main", {}, {}, {}},
                    {"fj::mutex, main", {}, {}, {}},
                    {"std::mutex, in a task", {}, {}, {}},
                    {"fj::mutex, in a task", {}, {}, {}}};
    interleave(o.rounds, 4, [&](std::size_t i) {
        const bool fj_mutex = i % 2 == 1;
        auto run = [&] {
            return fj_mutex ? pairs_ns<fj::mutex>(o.pairs) : pairs_ns<std::mutex>(o.pairs);
        };
        v[i].times.push_back(i < 2 ? run() : pool.submit(run).get());
    });
    print_head("ns median");
    for (const auto& x : v)
        print_variant(x, "%10.2f");
    print_ratio(v[1], v[0]);
    print_ratio(v[3], v[2]);
}

// --- counter ----------------------------------------------------------------------------------

// ns per iteration of a parallel_for whose body locks `Mutex` around ++counter, run from a task
// of `pool`: the mean of `repeat` loops.
template <class Mutex>
double counter_ns(fj::scheduler& pool, int iterations, int repeat) {
    Mutex m;
    long counter = 0;
    const double s = fj_perf::seconds_of([&] {
        pool.submit([&] {
                for (int k = 0; k < repeat; ++k)
                    fj::parallel_for(pool, 0, iterations, [&](int) {
                        std::lock_guard guard(m);
                        ++counter;
                    });
            })
            .get();
    });
    if (counter != static_cast<long>(iterations) * repeat)
        wrong("counter");
    return s * 1e9 / (static_cast<double>(iterations) * repeat);
}

void counter_part(const options& o) {
    std::printf("\ncounter: parallel_for over %d iterations, each locking a mutex around "
                "++counter, from a task, ns per iteration, %d rounds of %d loops\n",
                o.iterations, o.rounds, o.repeat);
    for (const int workers : {1, 2}) {
        fj::scheduler pool(pool_options(workers));
        warm(pool);
        counter_ns<std::mutex>(pool, o.iterations, 1); // the loop's first run, untimed
        counter_ns<fj::mutex>(pool, o.iterations, 1);
        const auto before = pool.stats();
        variant v[2] = {{"std::mutex, " + std::to_string(workers) + " worker(s)", {}, {}, {}},
                        {"fj::mutex, " + std::to_string(workers) + " worker(s)", {}, {}, {}}};
        std::uint64_t fj_parks = 0;
        interleave(o.rounds, 2, [&](std::size_t i) {
            if (i == 0) {
                v[0].times.push_back(counter_ns<std::mutex>(pool, o.iterations, o.repeat));
            } else {
                const auto parks = pool.stats().total().parks;
                v[1].times.push_back(counter_ns<fj::mutex>(pool, o.iterations, o.repeat));
                fj_parks += pool.stats().total().parks - parks;
            }
        });
        print_head("ns median");
        for (const auto& x : v)
            print_variant(x, "%10.2f");
        print_ratio(v[1], v[0]);
        std::printf(
            "  (fj::mutex parks per loop: %.1f; spares started during the rounds: %llu)\n",
            static_cast<double>(fj_parks) / (o.rounds * o.repeat),
            static_cast<unsigned long long>(pool.stats().spares_started - before.spares_started));
    }
}

// --- pipeline ---------------------------------------------------------------------------------

// A bounded queue on std::mutex and std::condition_variable, with the channel's close().
class std_queue {
public:
    explicit std_queue(std::size_t capacity) : m_capacity(capacity) {}

    void send(int v) {
        std::unique_lock lock(m_lock);
        m_not_full.wait(lock, [&] { return m_items.size() < m_capacity; });
        m_items.push_back(v);
        m_not_empty.notify_one();
    }

    // False once closed and drained.
    bool receive(int& v) {
        std::unique_lock lock(m_lock);
        m_not_empty.wait(lock, [&] { return !m_items.empty() || m_closed; });
        if (m_items.empty())
            return false;
        v = m_items.front();
        m_items.pop_front();
        m_not_full.notify_one();
        return true;
    }

    void close() {
        std::lock_guard lock(m_lock);
        m_closed = true;
        m_not_empty.notify_all();
    }

private:
    std::mutex m_lock;
    std::condition_variable m_not_full, m_not_empty;
    std::deque<int> m_items;
    std::size_t m_capacity;
    bool m_closed = false;
};

// The same interface over fj::channel<int>.
class fj_queue {
public:
    explicit fj_queue(std::size_t capacity) : m_channel(capacity) {}
    void send(int v) { m_channel.send(v); }
    bool receive(int& v) {
        const auto got = m_channel.receive();
        if (got)
            v = *got;
        return got.has_value();
    }
    void close() { m_channel.close(); }

private:
    fj::channel<int> m_channel;
};

// A consumer's work per item: `work` dependent multiply-adds, which the empty asm keeps (their
// value is dropped, so the sum stays checkable).
inline std::int64_t consume(int v, int work) {
    std::uint64_t x = static_cast<std::uint64_t>(v);
    for (int k = 0; k < work; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return v;
}

// The pipeline's four bodies over queue `q`: producers (2) send their halves of [0, items) and
// the second to finish closes; consumers (2) add what they receive to `sum`.
template <class Queue>
struct pipeline {
    Queue q;
    int items, work;
    std::atomic<int> producers_left{2};
    std::atomic<std::int64_t> sum{0};

    pipeline(std::size_t capacity, int n, int w) : q(capacity), items(n), work(w) {}

    void produce(int p) {
        const int half = items / 2;
        const int end = p == 0 ? half : items;
        for (int v = p == 0 ? 0 : half; v < end; ++v)
            q.send(v);
        if (producers_left.fetch_sub(1) == 1)
            q.close();
    }

    void consume_all() {
        std::int64_t local = 0;
        int v = 0;
        while (q.receive(v))
            local += consume(v, work);
        sum.fetch_add(local);
    }

    void check() const {
        const auto n = static_cast<std::int64_t>(items);
        if (sum.load() != n * (n - 1) / 2)
            wrong("pipeline");
    }
};

template <class Queue>
double pipeline_tasks_ms(fj::scheduler& pool, const options& o) {
    pipeline<Queue> p(static_cast<std::size_t>(o.capacity), o.items, o.work);
    std::vector<fj::future<void>> tasks;
    tasks.reserve(4);
    const double t = ms_of([&] {
        for (int k = 0; k < 2; ++k)
            tasks.push_back(pool.submit([&p, k] { p.produce(k); }));
        for (int k = 0; k < 2; ++k)
            tasks.push_back(pool.submit([&p] { p.consume_all(); }));
        for (auto& f : tasks)
            f.get();
    });
    p.check();
    return t;
}

// For scale: the same sum and work in one loop, with no queue.
double pipeline_serial_ms(const options& o) {
    std::int64_t sum = 0;
    const double t = ms_of([&] {
        for (int v = 0; v < o.items; ++v)
            sum += consume(v, o.work);
    });
    const auto n = static_cast<std::int64_t>(o.items);
    if (sum != n * (n - 1) / 2)
        wrong("pipeline (serial)");
    return t;
}

double pipeline_threads_ms(const options& o) {
    pipeline<std_queue> p(static_cast<std::size_t>(o.capacity), o.items, o.work);
    const double t = ms_of([&] {
        std::vector<std::thread> threads;
        for (int k = 0; k < 2; ++k)
            threads.emplace_back([&p, k] { p.produce(k); });
        for (int k = 0; k < 2; ++k)
            threads.emplace_back([&p] { p.consume_all(); });
        for (auto& th : threads)
            th.join();
    });
    p.check();
    return t;
}

void pipeline_part(const options& o) {
    std::printf("\npipeline: 2 producers, 2 consumers, %d ints through a queue of %d, %d "
                "multiply-adds per item; fj: a fresh 2-worker pool per round; ms, %d rounds\n",
                o.items, o.capacity, o.work, o.rounds);
    variant v[5] = {{"fj::channel, fj tasks", {}, {}, {}},
                    {"std queue, fj tasks", {}, {}, {}},
                    {"std queue, std::threads", {}, {}, {}},
                    {"serial loop, no queue", {}, {}, {}},
                    {"fj::channel, fj tasks, 1 worker", {}, {}, {}}};
    interleave(o.rounds, 5, [&](std::size_t i) {
        if (i == 2 || i == 3) {
            v[i].times.push_back(i == 2 ? pipeline_threads_ms(o) : pipeline_serial_ms(o));
            return;
        }
        fj::scheduler pool(pool_options(i == 4 ? 1 : 2));
        warm(pool);
        v[i].times.push_back(i == 1 ? pipeline_tasks_ms<std_queue>(pool, o)
                                    : pipeline_tasks_ms<fj_queue>(pool, o));
        record_pool(v[i], pool);
    });
    print_head("ms median");
    for (const auto& x : v)
        print_variant(x);
    print_ratio(v[0], v[1]);
    print_ratio(v[0], v[2]);
    print_ratio(v[0], v[4]);
}

// --- wake -------------------------------------------------------------------------------------

// One round's wake-to-run latencies: task A waits, task B releases it --gap µs after A announced
// its wait. µs from B's release to A running again; the median and the 99th percentile.
struct wake_latency {
    double median_us = 0, p99_us = 0;
};

template <class Semaphore>
wake_latency wake_round(fj::scheduler& pool, int samples, int gap_us) {
    using clock = fj_perf::clock_type;
    Semaphore semaphore(0);
    std::atomic<int> waiting{-1}; // the sample A is about to wait for
    std::vector<clock::time_point> released(static_cast<std::size_t>(samples));
    std::vector<clock::time_point> resumed(released.size());
    auto a = pool.submit([&] {
        for (int i = 0; i < samples; ++i) {
            waiting.store(i, std::memory_order_release);
            semaphore.acquire();
            resumed[static_cast<std::size_t>(i)] = clock::now();
        }
    });
    // B spins, so it keeps its worker: A runs again on the other one.
    auto b = pool.submit([&] {
        for (int i = 0; i < samples; ++i) {
            while (waiting.load(std::memory_order_acquire) != i) {
            }
            fj_perf::spin_for(std::chrono::microseconds(gap_us)); // A parks (or blocks) meanwhile
            released[static_cast<std::size_t>(i)] = clock::now();
            semaphore.release();
        }
    });
    a.get();
    b.get();
    std::vector<double> us;
    us.reserve(released.size());
    for (std::size_t i = 0; i < released.size(); ++i) {
        if (resumed[i] < released[i])
            wrong("wake");
        us.push_back(std::chrono::duration<double, std::micro>(resumed[i] - released[i]).count());
    }
    std::sort(us.begin(), us.end());
    return {fj_perf::median(us),
            us[static_cast<std::size_t>(0.99 * static_cast<double>(us.size() - 1))]};
}

void wake_part(const options& o) {
    std::printf("\nwake: task A waits on a binary semaphore, task B on the other worker releases "
                "it %d us after A's announcement; us from the release to A running, %d samples "
                "per round, a fresh 2-worker pool per round, %d rounds\n",
                o.gap_us, o.samples, o.rounds);
    variant median[2] = {{"std::binary_semaphore, median", {}, {}, {}},
                         {"fj::binary_semaphore, median", {}, {}, {}}};
    variant p99[2] = {{"std::binary_semaphore, p99", {}, {}, {}},
                      {"fj::binary_semaphore, p99", {}, {}, {}}};
    interleave(o.rounds, 2, [&](std::size_t i) {
        fj::scheduler pool(pool_options(2));
        warm(pool);
        const auto w = i == 0 ? wake_round<std::binary_semaphore>(pool, o.samples, o.gap_us)
                              : wake_round<fj::binary_semaphore>(pool, o.samples, o.gap_us);
        median[i].times.push_back(w.median_us);
        p99[i].times.push_back(w.p99_us);
        record_pool(median[i], pool);
        record_pool(p99[i], pool);
    });
    print_head("us median");
    for (const auto& v : median)
        print_variant(v, "%10.2f");
    for (const auto& v : p99)
        print_variant(v, "%10.2f");
    print_ratio(median[1], median[0]);
    print_ratio(p99[1], p99[0]);
}

// --- sleepers ---------------------------------------------------------------------------------

double fj_sleepers_ms(fj::scheduler& pool, int sleepers) {
    std::atomic<int> woken{0};
    std::vector<fj::future<void>> tasks;
    tasks.reserve(static_cast<std::size_t>(sleepers));
    const double t = ms_of([&] {
        for (int i = 0; i < sleepers; ++i)
            tasks.push_back(pool.submit([&woken] {
                fj::this_task::sleep_for(100ms);
                woken.fetch_add(1, std::memory_order_relaxed);
            }));
        for (auto& f : tasks)
            f.get();
    });
    if (woken.load() != sleepers)
        wrong("sleepers");
    return t;
}

// The threads' wall time; `started` tells how many std::async could start (it throws
// std::system_error when the system refuses a thread).
double async_sleepers_ms(int threads, int& started) {
    std::vector<std::future<void>> futures;
    futures.reserve(static_cast<std::size_t>(threads));
    const double t = ms_of([&] {
        try {
            for (int i = 0; i < threads; ++i)
                futures.push_back(
                    std::async(std::launch::async, [] { std::this_thread::sleep_for(100ms); }));
        } catch (const std::system_error&) {
        }
        for (auto& f : futures)
            f.get();
    });
    started = static_cast<int>(futures.size());
    return t;
}

void sleepers_part(const options& o) {
    std::printf("\nsleepers: %d tasks in fj::this_task::sleep_for(100 ms) on a fresh 2-worker "
                "pool, against %d std::async threads sleeping 100 ms; ms, %d rounds\n",
                o.sleepers, o.async_threads, o.sleeper_rounds);
    // The fresh pool maps a fiber stack for each parked task (docs/design/parking.md): the
    // second batch on the same pool shows what is left without that first-use cost.
    variant v[3] = {{std::to_string(o.sleepers) + " fj tasks, 2 workers", {}, {}, {}},
                    {std::to_string(o.async_threads) + " std::async threads", {}, {}, {}},
                    {"  the same again on that pool", {}, {}, {}}};
    int fewest_started = o.async_threads;
    interleave(o.sleeper_rounds, 2, [&](std::size_t i) {
        if (i == 1) {
            int started = 0;
            v[1].times.push_back(async_sleepers_ms(o.async_threads, started));
            fewest_started = std::min(fewest_started, started);
            return;
        }
        fj::scheduler pool(pool_options(2));
        warm(pool);
        v[0].times.push_back(fj_sleepers_ms(pool, o.sleepers));
        record_pool(v[0], pool);
        v[2].times.push_back(fj_sleepers_ms(pool, o.sleepers));
        record_pool(v[2], pool); // the pool's totals: less the first batch's, for this batch's
        v[2].spares.back() -= v[0].spares.back();
        v[2].parks.back() -= v[0].parks.back();
    });
    print_head("ms median");
    for (const auto& x : {v[0], v[2], v[1]})
        print_variant(x, "%10.1f");
    if (fewest_started < o.async_threads)
        std::printf("  (std::async could start only %d of %d threads in some round: "
                    "std::system_error)\n",
                    fewest_started, o.async_threads);
    print_ratio(v[0], v[1]);
}

// --- pingpong ---------------------------------------------------------------------------------

// Two players pass a counter: play() sends c + 1 there and takes c back; serve() sends back what
// it received + 1. After `trips` round trips play() holds 2 * trips.
template <class Queue>
struct pingpong {
    Queue there, back;
    int trips;
    int last = 0;

    pingpong(std::size_t capacity, int t) : there(capacity), back(capacity), trips(t) {}

    void serve() {
        int c = 0;
        for (int k = 0; k < trips; ++k) {
            there.receive(c);
            back.send(c + 1);
        }
    }

    void play() {
        int c = 0;
        for (int k = 0; k < trips; ++k) {
            there.send(c + 1);
            back.receive(c);
        }
        last = c;
    }

    double ns_per_message(double ms) const {
        if (last != 2 * trips)
            wrong("pingpong");
        return ms * 1e6 / (2.0 * trips);
    }
};

double pingpong_tasks_ns(fj::scheduler& pool, std::size_t capacity, int messages) {
    pingpong<fj_queue> p(capacity, messages / 2);
    const double t = ms_of([&] {
        auto server = pool.submit([&p] { p.serve(); });
        auto player = pool.submit([&p] { p.play(); });
        player.get();
        server.get();
    });
    return p.ns_per_message(t);
}

double pingpong_threads_ns(int messages) {
    pingpong<std_queue> p(1, messages / 2);
    const double t = ms_of([&] {
        std::thread server([&p] { p.serve(); });
        std::thread player([&p] { p.play(); });
        player.join();
        server.join();
    });
    return p.ns_per_message(t);
}

void pingpong_part(const options& o) {
    std::printf("\npingpong: 2 tasks pass a counter through two fj::channel<int>, %d messages, "
                "a fresh pool per round; ns per message, %d rounds\n",
                o.messages / 2 * 2, o.rounds);
    variant v[5] = {{"fj::channel(0), 1 worker", {}, {}, {}},
                    {"fj::channel(1), 1 worker", {}, {}, {}},
                    {"fj::channel(0), 2 workers", {}, {}, {}},
                    {"fj::channel(1), 2 workers", {}, {}, {}},
                    {"std queue(1), 2 std::threads", {}, {}, {}}};
    interleave(o.rounds, 5, [&](std::size_t i) {
        if (i == 4) {
            v[i].times.push_back(pingpong_threads_ns(o.messages));
            return;
        }
        fj::scheduler pool(pool_options(i < 2 ? 1 : 2));
        warm(pool);
        v[i].times.push_back(pingpong_tasks_ns(pool, i % 2, o.messages));
        record_pool(v[i], pool);
    });
    print_head("ns median");
    for (const auto& x : v)
        print_variant(x, "%10.1f");
    print_ratio(v[2], v[0]);
    print_ratio(v[3], v[1]);
    print_ratio(v[3], v[4]);
}

// --- copingpong -------------------------------------------------------------------------------

fj::task<void> co_serve(fj::channel<int>& there, fj::channel<int>& back, int trips) {
    for (int k = 0; k < trips; ++k) {
        const std::optional<int> c = co_await there.receive_async();
        co_await back.send_async(*c + 1);
    }
}

fj::task<int> co_play(fj::channel<int>& there, fj::channel<int>& back, int trips) {
    int c = 0;
    for (int k = 0; k < trips; ++k) {
        co_await there.send_async(c + 1);
        c = *co_await back.receive_async();
    }
    co_return c;
}

double copingpong_ns(fj::scheduler& pool, std::size_t capacity, int messages) {
    const int trips = messages / 2;
    fj::channel<int> there(capacity), back(capacity);
    int last = 0;
    const double t = ms_of([&] {
        auto server = fj::async(pool, co_serve(there, back, trips));
        auto player = fj::async(pool, co_play(there, back, trips));
        last = player.get();
        server.get();
    });
    if (last != 2 * trips)
        wrong("copingpong");
    return t * 1e6 / (2.0 * trips);
}

void copingpong_part(const options& o) {
    std::printf("\ncopingpong: the pingpong through two fj::channel<int>(0), %d messages, awaiting "
                "coroutines against parked tasks, a fresh pool per round; ns per message, %d "
                "rounds\n",
                o.messages / 2 * 2, o.rounds);
    variant v[4] = {{"co_await fj::task, 1 worker", {}, {}, {}},
                    {"parked tasks, 1 worker", {}, {}, {}},
                    {"co_await fj::task, 2 workers", {}, {}, {}},
                    {"parked tasks, 2 workers", {}, {}, {}}};
    interleave(o.rounds, 4, [&](std::size_t i) {
        fj::scheduler pool(pool_options(i < 2 ? 1 : 2));
        warm(pool);
        v[i].times.push_back(i % 2 == 0 ? copingpong_ns(pool, 0, o.messages)
                                        : pingpong_tasks_ns(pool, 0, o.messages));
        record_pool(v[i], pool);
    });
    print_head("ns median");
    for (const auto& x : v)
        print_variant(x, "%10.1f");
    print_ratio(v[0], v[1]);
    print_ratio(v[2], v[3]);
}

// --- stages -----------------------------------------------------------------------------------

// One stage's work on an item: `work` dependent multiply-adds, kept by the empty asm.
inline std::uint64_t mix(std::uint64_t x, int work) {
    for (int k = 0; k < work; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// The 4 stages in one loop: the reference sum (wrapping) and the scale.
double stages_serial_ms(const options& o, std::uint64_t& sum) {
    sum = 0;
    return ms_of([&] {
        for (int i = 0; i < o.stage_items; ++i)
            sum += mix(mix(mix(mix(static_cast<std::uint64_t>(i), o.stage_work), o.stage_work),
                           o.stage_work),
                       o.stage_work);
    });
}

double stages_channels_ms(fj::scheduler& pool, const options& o, std::uint64_t expected) {
    const auto capacity = static_cast<std::size_t>(o.capacity);
    fj::channel<std::uint64_t> c1(capacity), c2(capacity), c3(capacity);
    const int n = o.stage_items, work = o.stage_work;
    std::uint64_t sum = 0;
    auto middle = [work](fj::channel<std::uint64_t>& in, fj::channel<std::uint64_t>& out) {
        while (const auto v = in.receive())
            out.send(mix(*v, work));
        out.close();
    };
    std::vector<fj::future<void>> tasks;
    tasks.reserve(4);
    const double t = ms_of([&] {
        tasks.push_back(pool.submit([&] {
            for (int i = 0; i < n; ++i)
                c1.send(mix(static_cast<std::uint64_t>(i), work));
            c1.close();
        }));
        tasks.push_back(pool.submit([&] { middle(c1, c2); }));
        tasks.push_back(pool.submit([&] { middle(c2, c3); }));
        tasks.push_back(pool.submit([&] {
            std::uint64_t s = 0;
            while (const auto v = c3.receive())
                s += mix(*v, work);
            sum = s;
        }));
        for (auto& f : tasks)
            f.get();
    });
    if (sum != expected)
        wrong("stages (channels)");
    return t;
}

double stages_pipeline_ms(fj::scheduler& pool, const options& o, std::uint64_t expected) {
    const int n = o.stage_items, work = o.stage_work;
    std::uint64_t sum = 0;
    const double t = ms_of([&] {
        // Run from a task, so that the pool's 2 workers do all the work (called from main, the
        // caller would join them as a third thread).
        pool.submit([&] {
                int next = 0;
                fj::parallel_pipeline(pool, static_cast<std::size_t>(o.tokens),
                                      fj::make_filter<void, std::uint64_t>(
                                          fj::filter_mode::serial_in_order,
                                          [&](fj::flow_control& fc) -> std::uint64_t {
                                              if (next == n) {
                                                  fc.stop();
                                                  return 0;
                                              }
                                              return mix(static_cast<std::uint64_t>(next++), work);
                                          }) &
                                          fj::make_filter<std::uint64_t, std::uint64_t>(
                                              fj::filter_mode::parallel,
                                              [work](std::uint64_t x) { return mix(x, work); }) &
                                          fj::make_filter<std::uint64_t, std::uint64_t>(
                                              fj::filter_mode::parallel,
                                              [work](std::uint64_t x) { return mix(x, work); }) &
                                          fj::make_filter<std::uint64_t, void>(
                                              fj::filter_mode::serial_in_order,
                                              [&](std::uint64_t x) { sum += mix(x, work); }));
            })
            .get();
    });
    if (sum != expected)
        wrong("stages (parallel_pipeline)");
    return t;
}

void stages_part(const options& o) {
    std::printf("\nstages: %d ints through 4 stages of %d multiply-adds, a fresh 2-worker pool per "
                "round; channels of %d between 4 tasks against fj::parallel_pipeline with %d "
                "tokens; ms, %d rounds\n",
                o.stage_items, o.stage_work, o.capacity, o.tokens, o.rounds);
    std::uint64_t expected = 0;
    stages_serial_ms(o, expected); // the reference sum, untimed
    variant v[3] = {{"fj::channel, 4 tasks", {}, {}, {}},
                    {"fj::parallel_pipeline", {}, {}, {}},
                    {"serial loop, no stages", {}, {}, {}}};
    interleave(o.rounds, 3, [&](std::size_t i) {
        if (i == 2) {
            std::uint64_t sum = 0;
            v[i].times.push_back(stages_serial_ms(o, sum));
            if (sum != expected)
                wrong("stages (serial)");
            return;
        }
        fj::scheduler pool(pool_options(2));
        warm(pool);
        v[i].times.push_back(i == 0 ? stages_channels_ms(pool, o, expected)
                                    : stages_pipeline_ms(pool, o, expected));
        record_pool(v[i], pool);
    });
    print_head("ms median");
    for (const auto& x : v)
        print_variant(x, "%10.1f");
    print_rounds(v[0]);
    print_rounds(v[1]);
    print_ratio(v[0], v[1]);
    print_ratio(v[0], v[2]);
    print_ratio(v[1], v[2]);
}

// --- contended8 -------------------------------------------------------------------------------

// What the critical sections update: their multiply-adds run on x, in whatever order, so x ends
// at the same value as in one serial loop.
struct shared_data {
    std::uint64_t x = 0;
    long entries = 0;
};

template <class Mutex>
double contended_ms(fj::scheduler& pool, const options& o, std::uint64_t expected) {
    Mutex m;
    shared_data shared;
    std::atomic<std::uint64_t> outside_sum{0};
    std::vector<fj::future<void>> tasks;
    tasks.reserve(static_cast<std::size_t>(o.contenders));
    const double t = ms_of([&] {
        for (int k = 0; k < o.contenders; ++k)
            tasks.push_back(pool.submit([&, k] {
                auto own = static_cast<std::uint64_t>(k);
                for (int i = 0; i < o.lock_iterations; ++i) {
                    {
                        std::lock_guard guard(m);
                        shared.x = mix(shared.x, o.inside);
                        ++shared.entries;
                    }
                    own = mix(own, o.outside);
                }
                outside_sum.fetch_add(own, std::memory_order_relaxed);
            }));
        for (auto& f : tasks)
            f.get();
    });
    if (shared.x != expected ||
        shared.entries != static_cast<long>(o.contenders) * o.lock_iterations)
        wrong("contended8");
    return t;
}

// The same sections in one loop, with no lock: the reference x and the scale.
double contended_serial_ms(const options& o, std::uint64_t& x) {
    x = 0;
    std::uint64_t own_sum = 0;
    const double t = ms_of([&] {
        for (int k = 0; k < o.contenders; ++k) {
            auto own = static_cast<std::uint64_t>(k);
            for (int i = 0; i < o.lock_iterations; ++i) {
                x = mix(x, o.inside);
                own = mix(own, o.outside);
            }
            own_sum += own;
        }
    });
    asm volatile("" : : "r"(own_sum));
    return t;
}

// ns of `work` multiply-adds, the median of 11 timings of 100,000 of them.
double mix_ns(int work) {
    std::vector<double> ns;
    std::uint64_t x = 0;
    for (int r = 0; r < 11; ++r)
        ns.push_back(fj_perf::seconds_of([&] {
                         for (int i = 0; i < 100'000; ++i)
                             x = mix(x, work);
                     }) *
                     1e9 / 100'000);
    asm volatile("" : : "r"(x));
    return fj_perf::median(ns);
}

void contended_part(const options& o) {
    std::printf("\ncontended8: %d tasks on a fresh 2-worker pool, each %d times: lock, %d "
                "multiply-adds on shared data (%.0f ns), unlock, %d of its own (%.0f ns); ms per "
                "run, %d rounds\n",
                o.contenders, o.lock_iterations, o.inside, mix_ns(o.inside), o.outside,
                mix_ns(o.outside), o.rounds);
    std::uint64_t expected = 0;
    contended_serial_ms(o, expected); // the reference x, untimed
    variant v[3] = {{"std::mutex", {}, {}, {}},
                    {"fj::mutex", {}, {}, {}},
                    {"serial loop, no lock", {}, {}, {}}};
    interleave(o.rounds, 3, [&](std::size_t i) {
        if (i == 2) {
            std::uint64_t x = 0;
            v[i].times.push_back(contended_serial_ms(o, x));
            if (x != expected)
                wrong("contended8 (serial)");
            return;
        }
        fj::scheduler pool(pool_options(2));
        warm(pool);
        v[i].times.push_back(i == 0 ? contended_ms<std::mutex>(pool, o, expected)
                                    : contended_ms<fj::mutex>(pool, o, expected));
        record_pool(v[i], pool);
    });
    print_head("ms median");
    for (const auto& x : v)
        print_variant(x, "%10.2f");
    print_rounds(v[0]);
    print_rounds(v[1]);
    print_ratio(v[1], v[0]);
    print_ratio(v[0], v[2]);
    print_ratio(v[1], v[2]);
}

// The read-mostly run of `shared`: writers (i % 10 == 0) apply mix to the shared value, so its
// end value is known whatever the order; readers fold it into their own.
template <class SharedMutex>
double shared_ms(fj::scheduler& pool, const options& o, std::uint64_t expected) {
    SharedMutex m;
    shared_data shared;
    std::atomic<std::uint64_t> own_sum{0};
    std::vector<fj::future<void>> tasks;
    tasks.reserve(static_cast<std::size_t>(o.contenders));
    const double t = ms_of([&] {
        for (int k = 0; k < o.contenders; ++k)
            tasks.push_back(pool.submit([&, k] {
                auto own = static_cast<std::uint64_t>(k);
                for (int i = 0; i < o.lock_iterations; ++i) {
                    if (i % 10 == 0) {
                        std::unique_lock guard(m);
                        shared.x = mix(shared.x, o.inside);
                        ++shared.entries;
                    } else {
                        std::shared_lock guard(m);
                        own = mix(own ^ shared.x, o.inside);
                    }
                    own = mix(own, o.outside);
                }
                own_sum.fetch_add(own, std::memory_order_relaxed);
            }));
        for (auto& f : tasks)
            f.get();
    });
    if (shared.x != expected ||
        shared.entries != static_cast<long>(o.contenders) * ((o.lock_iterations + 9) / 10))
        wrong("shared");
    return t;
}

void shared_part(const options& o) {
    std::printf("\nshared: %d tasks on a fresh 2-worker pool, each %d times: 1 in 10 exclusive, "
                "else shared, lock around %d multiply-adds (%.0f ns), then %d of its own "
                "(%.0f ns); ms per run, %d rounds\n",
                o.contenders, o.lock_iterations, o.inside, mix_ns(o.inside), o.outside,
                mix_ns(o.outside), o.rounds);
    std::uint64_t expected = 0;
    const long writes = static_cast<long>(o.contenders) * ((o.lock_iterations + 9) / 10);
    for (long w = 0; w < writes; ++w)
        expected = mix(expected, o.inside);
    variant v[2] = {{"std::shared_mutex", {}, {}, {}}, {"fj::shared_mutex", {}, {}, {}}};
    interleave(o.rounds, 2, [&](std::size_t i) {
        fj::scheduler pool(pool_options(2));
        warm(pool);
        v[i].times.push_back(i == 0 ? shared_ms<std::shared_mutex>(pool, o, expected)
                                    : shared_ms<fj::shared_mutex>(pool, o, expected));
        record_pool(v[i], pool);
    });
    print_head("ms median");
    for (const auto& x : v)
        print_variant(x, "%10.2f");
    print_rounds(v[0]);
    print_rounds(v[1]);
    print_ratio(v[1], v[0]);
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("sync_bench: load average %s, %u CPUs online\n", fj_perf::load_average().c_str(),
                std::thread::hardware_concurrency());
    const struct {
        const char* name;
        void (*run)(const options&);
    } parts[] = {
        {"latch", latch_part},          {"sleeps", sleeps_part},         {"lock", lock_part},
        {"counter", counter_part},      {"pipeline", pipeline_part},     {"wake", wake_part},
        {"sleepers", sleepers_part},    {"pingpong", pingpong_part},     {"stages", stages_part},
        {"contended8", contended_part}, {"copingpong", copingpong_part}, {"shared", shared_part}};
    for (const auto& p : parts) {
        if (!wants(o, p.name))
            continue;
        const fj_perf::interference_meter meter;
        p.run(o);
        meter.report(p.name);
    }
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
}
