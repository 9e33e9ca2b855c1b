// Tiny tasks on oneTBB.
// Throughput: task_group::run from the main thread inside an arena of `workers` slots (the main
// thread holds one slot, so it is a TBB worker too: that is how TBB is used).
// Latency: arena::enqueue from outside into an arena whose slots are all for worker threads,
// the closest TBB analogue of submitting to an idle pool.
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

namespace {

using clock_type = std::chrono::steady_clock;

std::int64_t ns_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

std::int64_t throughput(int workers, long count) {
    tbb::task_arena arena{workers};
    arena.initialize();
    std::vector<long> out(static_cast<std::size_t>(count));
    auto const t0 = clock_type::now();
    arena.execute([&] {
        tbb::task_group tg;
        for (long i = 0; i < count; ++i) {
            tg.run([&out, i] { out[static_cast<std::size_t>(i)] = fj_perf::tiny_task_value(i); });
        }
        tg.wait();
    });
    auto const t1 = clock_type::now();
    long sum = 0;
    for (long v : out)
        sum += v;
    fj_perf::check_result("tbb", "tiny tasks", sum, fj_perf::tiny_task_sum(count));
    return ns_between(t0, t1);
}

// Shared with the enqueued task by shared_ptr: the task's notify is its last touch and may
// still be running when the driver moves on.
struct latency_state {
    std::atomic<int> done{0}; // release by the task, acquire by the waiter: publishes `started`
    clock_type::time_point started;
};

std::vector<std::int64_t> latency(int workers, int samples, std::chrono::microseconds gap) {
    // TBB's default pool has (cores - 1) worker threads; allow `workers` of them.
    tbb::global_control threads{tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(workers) + 1};
    tbb::task_arena arena{workers, 0}; // no slot reserved for the submitting thread
    arena.initialize();
    auto state = std::make_shared<latency_state>();
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(samples));
    for (int s = 0; s < samples; ++s) {
        std::this_thread::sleep_for(gap);
        auto const t0 = clock_type::now();
        arena.enqueue([state, s] {
            state->started = clock_type::now();
            state->done.store(s + 1, std::memory_order_release);
            state->done.notify_one();
        });
        for (int seen = state->done.load(std::memory_order_acquire); seen != s + 1;
             seen = state->done.load(std::memory_order_acquire)) {
            state->done.wait(seen, std::memory_order_acquire);
        }
        fj_perf::check_result("tbb", "latency: task started after submit", state->started >= t0,
                              true);
        out.push_back(ns_between(t0, state->started));
    }
    return out;
}

fj_perf::registrar const reg{
    fj_perf::task_competitor{"tbb", 20, true, fj_perf::k_tiny_tasks, &throughput, &latency}};

} // namespace
