// fib_bench: Google Benchmark view of the fib workload. The serial reference, forkjoin's two
// styles and every competitor that was built (oneTBB, OpenMP: found through the registration
// table, competitors/competitor.hpp) land in one binary, so a single run shows them side by side.
//
//   fib_bench                                   all of them, fib 25 and 30, 1 and 2 workers
//   fib_bench --benchmark_filter='/30/'         only fib(30)
//
// Names are <competitor>/n:<n>/workers:<k>. The "per_fork" counter is the time per iteration
// divided by the number of forks (printed with its unit, e.g. 38.2ns), i.e. the whole cost of a
// fork (including its share of the useful work); subtract serial's per_fork for the overhead. Every
// iteration checks its result.
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <memory>
#include <string>

#include <benchmark/benchmark.h>

namespace {

void set_counters(benchmark::State& state, int n) {
    state.counters["per_fork"] = benchmark::Counter(static_cast<double>(fj_perf::fork_count(n)),
                                                    benchmark::Counter::kIsIterationInvariantRate |
                                                        benchmark::Counter::kInvert);
}

void bm_serial(benchmark::State& state) {
    int const n = static_cast<int>(state.range(0));
    for (auto _ : state) {
        long r = fj_perf::fib_serial(n);
        benchmark::DoNotOptimize(r);
        fj_perf::check_fib("serial", n, r);
    }
    set_counters(state, n);
}

// The runner (its thread pool) is built before the timed loop.
void bm_parallel(benchmark::State& state, fj_perf::fib_competitor const* c) {
    int const n = static_cast<int>(state.range(0));
    int const workers = static_cast<int>(state.range(1));
    auto runner = c->make(workers);
    fj_perf::check_fib(c->name, n, runner->fib(n, 0)); // warm-up
    for (auto _ : state) {
        long r = runner->fib(n, 0);
        benchmark::DoNotOptimize(r);
        fj_perf::check_fib(c->name, n, r);
    }
    set_counters(state, n);
}

void register_all() {
    auto* serial = benchmark::RegisterBenchmark("serial", bm_serial);
    for (int n : fj_perf::k_bench_n)
        serial->Arg(n);
    serial->ArgName("n")->Unit(benchmark::kMillisecond)->UseRealTime();

    for (auto const& c : fj_perf::fib_competitors()) {
        auto* b = benchmark::RegisterBenchmark(c.name.c_str(), bm_parallel, &c);
        for (int n : fj_perf::k_bench_n) {
            for (int k : fj_perf::k_workers)
                b->Args({n, k});
        }
        b->ArgNames({"n", "workers"})->Unit(benchmark::kMillisecond)->UseRealTime();
    }
}

} // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
