// What one park + resume costs (docs/performance.md#parking), as Google Benchmark cases.
//
// On a 1-worker pool, one task repeatedly submits a no-op to the injection queue and get()s it.
// The no-op is never in the waiter's own deque, so get() cannot run it inline:
//   wait_parks  (parking on)  the waiter parks on a fresh loop fiber, the loop runs the no-op,
//                             whose completion queues the waiter, and the loop ends into it;
//   wait_helps  (parking off) the waiter helps: it takes the no-op from the injection queue and
//                             runs it on top of its own frame.
// Both include the submit and the run of the no-op; the difference is the park + resume.
#include "forkjoin_common.hpp"

#include <cstdint>

#include <benchmark/benchmark.h>

#include <forkjoin/forkjoin.hpp>

namespace {

constexpr int k_round_trips = 1000; // per benchmark iteration, inside one task

void wait_on_injected_tasks(benchmark::State& state, bool park) {
    fj::scheduler pool(fj_perf::pool_options(1, park));
    for (auto _ : state) {
        const long sum = pool.submit([&pool] {
                                 long total = 0;
                                 for (int i = 0; i < k_round_trips; ++i)
                                     total += pool.submit([i] { return i; }).get();
                                 return total;
                             })
                             .get();
        if (sum != static_cast<long>(k_round_trips) * (k_round_trips - 1) / 2)
            state.SkipWithError("wrong sum");
    }
    state.SetItemsProcessed(state.iterations() * k_round_trips);
    const fj::worker_stats total = pool.stats().total();
    state.counters["parks_per_wait"] =
        static_cast<double>(total.parks) / static_cast<double>(state.iterations() * k_round_trips);
}

void wait_parks(benchmark::State& state) {
    wait_on_injected_tasks(state, true);
}
void wait_helps(benchmark::State& state) {
    wait_on_injected_tasks(state, false);
}

BENCHMARK(wait_parks)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(wait_helps)->UseRealTime()->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
