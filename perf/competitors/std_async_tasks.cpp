// Tiny tasks on std::async(std::launch::async): libstdc++ starts one thread per task, so it has
// no pool size and gets a smaller count (k_async_tasks).
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <chrono>
#include <cstdint>
#include <future>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

std::int64_t ns_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

std::int64_t throughput(int /*workers*/, long count) {
    std::vector<std::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(count));
    auto const t0 = clock_type::now();
    for (long i = 0; i < count; ++i) {
        futures.push_back(
            std::async(std::launch::async, [i] { return fj_perf::tiny_task_value(i); }));
    }
    long sum = 0;
    for (auto& f : futures)
        sum += f.get();
    auto const t1 = clock_type::now();
    fj_perf::check_result("std::async", "tiny tasks", sum, fj_perf::tiny_task_sum(count));
    return ns_between(t0, t1);
}

std::vector<std::int64_t> latency(int /*workers*/, int samples, std::chrono::microseconds gap) {
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(samples));
    for (int s = 0; s < samples; ++s) {
        std::this_thread::sleep_for(gap);
        auto const t0 = clock_type::now();
        auto const started = std::async(std::launch::async, [] { return clock_type::now(); }).get();
        fj_perf::check_result("std::async", "latency: task started after submit", started >= t0,
                              true);
        out.push_back(ns_between(t0, started));
    }
    return out;
}

fj_perf::registrar const reg{fj_perf::task_competitor{
    "std::async", 90, false, fj_perf::k_async_tasks, &throughput, &latency}};

} // namespace
