// reschedule_until(pred): yield-parking against bounded helping, as Google Benchmark cases
// (docs/performance.md#reschedule-until).
//
// A predicate cannot wake anybody, so a reschedule_until that the worker's own deque does not
// satisfy must re-check it now and then. Two strategies, chosen per pool:
//   park  (park_waiting_tasks = true, the default) yield-park: the waiter parks on its fiber and
//         its record stays on its worker, which resumes it to re-check after the next task it
//         runs (then after 2, 4, ... up to 64), or at once when it has nothing else to run;
//   help  (park_waiting_tasks = false) bounded helping: the waiter runs other tasks on top of its
//         own frame (find_work order) and re-checks between them; it stops taking work when the
//         stack's headroom is low.
// Every case runs both ways; the two variants are registered next to each other. Run them
// interleaved: --benchmark_enable_random_interleaving=true with --benchmark_repetitions.
//
//   seed_fib       fib(27) in the seed style (fork + reschedule_until(is_ready)) on 2 workers,
//                  where stolen children make some waits real: ns per fork and parks (and on 1
//                  worker, where nothing parks, for the fiber stacks' own effect);
//   waiters        64 tasks, each submits 8 children of a few µs to the injection queue and
//                  waits for all of them with reschedule_until: time per round, parks per waiter
//                  and the peak nesting depth (see nesting_probe) on 1 and 2 workers;
//   unrelated_long a waiter queues 8 unrelated 500 µs tasks, then reschedule_until(pred) with a
//                  predicate that turns true 100 µs into the wait: the latency from the moment
//                  it turned true to the wait's return, median and 90th percentile over the
//                  rounds (the oneTBB#942 shape: helping can trap the waiter in a long task);
//   child_alone    one `waiters` child run serially, for scale.
//
// The benchmark thread never runs tasks (outside the pool, future::get() blocks; see countdown),
// so the worker counts are exact.
#include "forkjoin_common.hpp"
#include "measure.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <forkjoin/forkjoin.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

using fj_perf::pool_options;

// FJ_PARKING overrides the option for every pool: a run with it set would report one strategy
// under both names.
bool strategy_as_asked(benchmark::State& state, const fj::scheduler& pool, bool park) {
    if (pool.stats().parking == park)
        return true;
    state.SkipWithError("FJ_PARKING overrides park_waiting_tasks: unset it");
    return false;
}

// ---- Nesting depth -----------------------------------------------------------------------------

// How deep do benchmark tasks nest on one stack? A thread_local counter around task bodies would
// be wrong with parking: a parked task leaves the thread (its frames go with its fiber) and may
// come back on another. So every task body pushes a frame_record on its own stack, and a
// thread_local pointer names the innermost record. A new body counts the record it finds as its
// parent only if that record is on its own stack, above it: within 16 MiB, while distinct stacks
// (64 MiB fiber stacks and 64 MiB worker stacks, used only near their tops here) are at least
// 64 MiB apart. The parent lives on the same stack, so restoring it on exit is right whichever
// thread the task ends on. Depth 1: nothing of ours below on this stack.
struct frame_record {
    const frame_record* parent; // the enclosing benchmark frame on this stack, or null
    int depth;
    const char* base; // the outermost record on this stack
};

// Out of line, and opaque to the optimiser: a task that parked must re-read the thread pointer
// after the switch, never reuse an address computed on the old thread
// (docs/design/current-worker.md#migration-and-thread-locals).
[[gnu::noinline]] const frame_record*& innermost_slot() noexcept {
    static thread_local const frame_record* slot = nullptr;
    const frame_record** p = &slot;
    asm volatile("" : "+r"(p)::"memory");
    return *p;
}

std::atomic<int> g_peak_depth{0};
std::atomic<std::ptrdiff_t> g_peak_stack_bytes{0};

template <class T>
void raise_to(std::atomic<T>& peak, T value) noexcept {
    T seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
}

class nesting_probe {
public:
    nesting_probe() noexcept {
        constexpr std::ptrdiff_t k_same_stack = std::ptrdiff_t{16} << 20;
        const char* here = reinterpret_cast<const char*>(&m_rec);
        const frame_record* outer = innermost_slot();
        // As integers: the two addresses may belong to unrelated objects.
        const auto gap = static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(outer) -
                                                     reinterpret_cast<std::uintptr_t>(here));
        if (outer != nullptr && gap > 0 && gap < k_same_stack)
            m_rec = {outer, outer->depth + 1, outer->base};
        else
            m_rec = {nullptr, 1, here};
        innermost_slot() = &m_rec;
        raise_to(g_peak_depth, m_rec.depth);
        raise_to(g_peak_stack_bytes, m_rec.base - here);
    }
    nesting_probe(const nesting_probe&) = delete;
    nesting_probe& operator=(const nesting_probe&) = delete;
    ~nesting_probe() { innermost_slot() = m_rec.parent; }

    // After a wait that may have parked: this thread's slot names whatever ran here last.
    void resumed() noexcept { innermost_slot() = &m_rec; }

private:
    frame_record m_rec{};
};

void reset_peaks() {
    g_peak_depth.store(0);
    g_peak_stack_bytes.store(0);
}

void report_peaks(benchmark::State& state) {
    state.counters["peak_depth"] = g_peak_depth.load();
    state.counters["peak_stack_KiB"] = static_cast<double>(g_peak_stack_bytes.load()) / 1024.0;
}

// ---- Work ----------------------------------------------------------------------------------

// A few µs of dependent arithmetic (about 2000 multiply-adds): a child that is still running
// when its waiter first checks.
constexpr int k_burn_rounds = 2000;

[[gnu::noinline]] std::uint64_t burn(std::uint64_t x) {
    for (int i = 0; i < k_burn_rounds; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        fj_perf::opaque(x);
    }
    return x;
}

// The benchmark thread waits for a round with one wake-up whatever the order in which the tasks
// finish: waiting on each future in turn would wake it once per task that finishes after the
// previous one (64 wake-ups a round when parked waiters finish in submission order, one when
// helping waiters unwind in reverse), and on this VM each such wake-up costs the waking worker
// tens of µs: a harness cost that would be charged to one strategy only.
class countdown {
public:
    void start(int n) noexcept { m_left.store(n, std::memory_order_relaxed); }
    // The task's last touch of the countdown (it lives as long as the pool, see below).
    void done() noexcept {
        if (m_left.fetch_sub(1, std::memory_order_acq_rel) == 1)
            m_left.notify_one();
    }
    void wait() const noexcept {
        for (int left = m_left.load(std::memory_order_acquire); left != 0;
             left = m_left.load(std::memory_order_acquire))
            m_left.wait(left, std::memory_order_acquire);
    }

private:
    std::atomic<int> m_left{0};
};

// ---- a. seed-style fib -------------------------------------------------------------------------

constexpr int k_fib_n = 27;

void seed_fib(benchmark::State& state) {
    const bool park = state.range(0) != 0;
    fj::scheduler pool(pool_options(static_cast<int>(state.range(1)), park));
    if (!strategy_as_asked(state, pool, park))
        return;
    const auto start = clock_type::now();
    for (auto _ : state) {
        const long got = pool.submit([&pool] { return fj_perf::fib_seed(pool, k_fib_n); }).get();
        if (got != fj_perf::fib_exact(k_fib_n)) {
            state.SkipWithError("wrong fib");
            return;
        }
    }
    const std::chrono::duration<double, std::nano> elapsed = clock_type::now() - start;
    const auto forks = static_cast<double>(fj_perf::fork_count(k_fib_n));
    const auto iterations = static_cast<double>(state.iterations());
    state.SetItemsProcessed(state.iterations() * fj_perf::fork_count(k_fib_n));
    state.counters["ns_per_fork"] = elapsed.count() / (forks * iterations);
    state.counters["parks_per_iter"] = static_cast<double>(pool.stats().total().parks) / iterations;
}

// ---- b. many waiters, each on its own injected children ----------------------------------

constexpr int k_waiters = 64;
constexpr int k_children = 8;
constexpr long k_round_sum = static_cast<long>(k_waiters) * k_children * (k_children + 1) / 2;

long waiter(fj::scheduler& pool, std::uint64_t seed) {
    nesting_probe probe;
    // submit(), not fork(): the children go to the injection queue, so the waiter's own deque
    // never holds them and the wait is a real one on 1 worker too.
    std::vector<fj::future<long>> children;
    children.reserve(k_children);
    for (int i = 0; i < k_children; ++i)
        children.push_back(pool.submit([i, seed] {
            nesting_probe leaf;
            benchmark::DoNotOptimize(burn(seed + static_cast<std::uint64_t>(i)));
            return static_cast<long>(i + 1);
        }));
    pool.reschedule_until([&] {
        return std::all_of(children.begin(), children.end(),
                           [](const fj::future<long>& f) { return f.is_ready(); });
    });
    probe.resumed();
    long sum = 0;
    for (auto& f : children)
        sum += f.get(); // all ready: no wait
    return sum;
}

void waiters(benchmark::State& state) {
    const bool park = state.range(0) != 0;
    const int workers = static_cast<int>(state.range(1));
    countdown round; // declared before the pool: outlives every task's last touch
    std::atomic<long> sum{0};
    fj::scheduler pool(pool_options(workers, park));
    if (!strategy_as_asked(state, pool, park))
        return;
    reset_peaks();
    for (auto _ : state) {
        sum.store(0, std::memory_order_relaxed);
        round.start(k_waiters);
        // All waiters from outside, in the injection queue: none runs inline in another's wait
        // through the own-deque fast path, so any nesting is the strategy's doing.
        for (int i = 0; i < k_waiters; ++i)
            pool.submit([&, i] {
                sum.fetch_add(waiter(pool, static_cast<std::uint64_t>(i) * 977),
                              std::memory_order_relaxed);
                round.done();
            });
        round.wait();
        if (sum.load(std::memory_order_relaxed) != k_round_sum) {
            state.SkipWithError("wrong sum of children");
            return;
        }
    }
    const auto iterations = static_cast<double>(state.iterations());
    state.SetItemsProcessed(state.iterations() * k_waiters);
    state.counters["parks_per_waiter"] =
        static_cast<double>(pool.stats().total().parks) / (iterations * k_waiters);
    report_peaks(state);
}

void child_alone(benchmark::State& state) {
    std::uint64_t seed = 1;
    for (auto _ : state)
        benchmark::DoNotOptimize(seed = burn(seed));
}

// ---- c. a waiter behind unrelated long tasks (oneTBB#942) -------------------------------------

constexpr int k_long_tasks = 8;
constexpr std::chrono::microseconds k_long_task{500};
constexpr std::chrono::microseconds k_true_after{100};

void unrelated_long(benchmark::State& state) {
    const bool park = state.range(0) != 0;
    const int workers = static_cast<int>(state.range(1));
    countdown round; // declared before the pool: outlives every task's last touch
    std::atomic<int> sum{0};
    fj::scheduler pool(pool_options(workers, park));
    if (!strategy_as_asked(state, pool, park))
        return;
    reset_peaks();
    std::vector<double> latencies_us;
    for (auto _ : state) {
        double latency_us = 0;
        sum.store(0, std::memory_order_relaxed);
        round.start(k_long_tasks + 1);
        pool.submit([&] {
            nesting_probe probe;
            // Queued before the waiter first re-checks: they are what helping can pick up and
            // what a yield-parked record queues behind.
            for (int i = 0; i < k_long_tasks; ++i)
                pool.submit([&, i] {
                    {
                        nesting_probe leaf;
                        fj_perf::spin_for(k_long_task);
                        sum.fetch_add(i + 1, std::memory_order_relaxed);
                    }
                    round.done();
                });
            // The condition turns true 100 µs into the wait, while the long tasks are queued.
            // A deadline stands for "another thread made it true early": a thread outside the
            // pool setting a flag often runs ~4 ms late on a loaded 2-core VM (one scheduler
            // tick), after every long task, which would measure the OS rather than the wait. A
            // deadline needs no thread to turn true.
            const auto becomes_true = clock_type::now() + k_true_after;
            pool.reschedule_until([&] { return clock_type::now() >= becomes_true; });
            const auto returned = clock_type::now();
            probe.resumed();
            latency_us = std::chrono::duration<double, std::micro>(returned - becomes_true).count();
            round.done();
        });
        round.wait();
        if (sum.load(std::memory_order_relaxed) != k_long_tasks * (k_long_tasks + 1) / 2) {
            state.SkipWithError("wrong sum of unrelated tasks");
            return;
        }
        latencies_us.push_back(latency_us);
    }
    // Median and 90th percentile over the rounds: a round in which a worker was preempted at the
    // wrong moment should not decide the figure.
    std::sort(latencies_us.begin(), latencies_us.end());
    const auto quantile = [&](double q) {
        const auto last = static_cast<double>(latencies_us.size() - 1);
        return latencies_us[static_cast<std::size_t>(q * last)];
    };
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["latency_p50_us"] = quantile(0.5);
    state.counters["latency_p90_us"] = quantile(0.9);
    state.counters["parks_per_iter"] = static_cast<double>(pool.stats().total().parks) / iterations;
    report_peaks(state);
}

// Each case's park and help variants next to each other (ArgNames: park:1 is yield-parking).
// seed_fib on 1 worker never parks (nothing is stolen): its park:1 row differs from park:0 only
// in where the frames live (fiber stacks against the thread's own), which separates that effect
// from the parks on 2 workers.
void park_and_help_on_1_and_2_workers(benchmark::internal::Benchmark* b) {
    b->ArgNames({"park", "workers"})->Args({1, 1})->Args({0, 1})->Args({1, 2})->Args({0, 2});
    b->UseRealTime();
}

BENCHMARK(seed_fib)->Apply(park_and_help_on_1_and_2_workers)->Unit(benchmark::kMillisecond);
BENCHMARK(waiters)->Apply(park_and_help_on_1_and_2_workers)->Unit(benchmark::kMicrosecond);
BENCHMARK(unrelated_long)->Apply(park_and_help_on_1_and_2_workers)->Unit(benchmark::kMicrosecond);
BENCHMARK(child_alone)->UseRealTime()->Unit(benchmark::kNanosecond);

} // namespace

BENCHMARK_MAIN();
