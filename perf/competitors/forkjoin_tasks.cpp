// Tiny tasks on forkjoin, submitted from outside the pool (the global FIFO injection queue).
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

std::int64_t ns_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

std::int64_t throughput(int workers, long count) {
    fj::scheduler pool{static_cast<std::size_t>(workers)};
    std::vector<fj::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(count));
    auto const t0 = clock_type::now();
    for (long i = 0; i < count; ++i) {
        futures.push_back(pool.submit([i] { return fj_perf::tiny_task_value(i); }));
    }
    long sum = 0;
    for (auto& f : futures)
        sum += f.get();
    auto const t1 = clock_type::now();
    fj_perf::check_result("fj", "tiny tasks", sum, fj_perf::tiny_task_sum(count));
    return ns_between(t0, t1);
}

// The same tasks with their futures dropped at once (fire-and-forget); completion is counted.
std::int64_t throughput_dropped(int workers, long count) {
    fj::scheduler pool{static_cast<std::size_t>(workers)};
    alignas(128) static std::atomic<long> sum;
    alignas(128) static std::atomic<long> done;
    sum = 0;
    done = 0;
    auto const t0 = clock_type::now();
    for (long i = 0; i < count; ++i) {
        (void)pool.submit([i] {
            sum.fetch_add(fj_perf::tiny_task_value(i), std::memory_order_relaxed);
            done.fetch_add(1, std::memory_order_release); // pairs with the acquire below
        });
    }
    while (done.load(std::memory_order_acquire) != count)
        std::this_thread::yield();
    auto const t1 = clock_type::now();
    fj_perf::check_result("fj-dropped", "tiny tasks", sum.load(), fj_perf::tiny_task_sum(count));
    return ns_between(t0, t1);
}

// The task's first instruction reads the clock; the future carries the reading back.
std::vector<std::int64_t> latency(int workers, int samples, std::chrono::microseconds gap) {
    fj::scheduler pool{static_cast<std::size_t>(workers)};
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(samples));
    for (int s = 0; s < samples; ++s) {
        std::this_thread::sleep_for(gap); // let the workers go to sleep
        auto const t0 = clock_type::now();
        auto const started = pool.submit([] { return clock_type::now(); }).get();
        fj_perf::check_result("fj", "latency: task started after submit", started >= t0, true);
        out.push_back(ns_between(t0, started));
    }
    return out;
}

fj_perf::registrar const reg{
    fj_perf::task_competitor{"fj", 10, true, fj_perf::k_tiny_tasks, &throughput, &latency}};
fj_perf::registrar const reg_dropped{fj_perf::task_competitor{
    "fj-dropped", 11, true, fj_perf::k_tiny_tasks, &throughput_dropped, nullptr}};

} // namespace
