// What trace mode and the parallelism profiler cost when on: ns per fork of fib(n) with every
// call forking (fj::join), on a 1-worker pool, best of `reps` runs, for
//   off       neither tool (the per-fork cost every program pays)
//   trace     scheduler_options::trace_file set (two events per task)
//   profile   inside fj::profile (a frame per task, thread-CPU-time clock reads)
// Usage: observability_cost [n=24] [reps=5]. The cost when off, as instructions per fork against
// an older commit: perf/instructions-per-fork.sh. Results: docs/performance.md#observability-cost.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

long fib_join(int n) {
    if (n < 2)
        return n;
    auto [a, b] = fj::join([=] { return fib_join(n - 1); }, [=] { return fib_join(n - 2); });
    return a + b;
}

long forks_of(int n) { // fib(n+1) - 1 calls have n >= 2, each forks once
    long a = 0, b = 1;
    for (int i = 0; i < n + 1; ++i) {
        const long c = a + b;
        a = b;
        b = c;
    }
    return a - 1;
}

enum class mode { off, trace, profile };

double ns_per_fork(mode m, int n, int reps) {
    const std::string trace_path =
        (std::filesystem::temp_directory_path() / "fj_observability_cost.json").string();
    double best = 1e300;
    for (int rep = 0; rep < reps; ++rep) {
        fj::scheduler_options options;
        options.workers = 1;
        if (m == mode::trace) {
            options.trace_file = trace_path;
            options.trace_events_per_worker =
                std::size_t{4} * static_cast<std::size_t>(forks_of(n));
        }
        fj::scheduler pool(options);
        long result = 0;
        const auto start = std::chrono::steady_clock::now();
        if (m == mode::profile)
            fj::profile(pool, [&] { result = fib_join(n); });
        else
            result = pool.submit([&] { return fib_join(n); }).get();
        const auto stop = std::chrono::steady_clock::now();
        if (result <= 0)
            std::abort();
        const double ns = std::chrono::duration<double, std::nano>(stop - start).count();
        best = std::min(best, ns / static_cast<double>(forks_of(n)));
    } // the trace file is written here, outside the timed part
    std::filesystem::remove(trace_path);
    return best;
}

} // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 24;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    if (n < 2 || n > 40 || reps < 1) {
        std::fprintf(stderr, "usage: observability_cost [n in 2..40] [reps >= 1]\n");
        return 2;
    }
    const double off = ns_per_fork(mode::off, n, reps);
    const double trace = ns_per_fork(mode::trace, n, reps);
    const double profile = ns_per_fork(mode::profile, n, reps);
    std::printf("fib(%d), 1 worker, best of %d: ns per fork\n", n, reps);
    std::printf("  off      %10.1f\n", off);
    std::printf("  trace    %10.1f   (%.1fx)\n", trace, trace / off);
    std::printf("  profile  %10.1f   (%.1fx)\n", profile, profile / off);
    return 0;
}
