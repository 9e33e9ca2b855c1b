// What a pool of P workers costs while it does nothing (docs/performance.md#at-scale): its start
// and stop against starting and joining P plain threads, in interleaved rounds; the memory and
// mappings its idle workers hold; the CPU time it uses in one idle second. Run it in a process
// that sees P CPUs (perf/at-scale.sh's fj_fake_cpus preload) so the pool takes the uncrowded paths.
//   idle_pool [--workers P] [--rounds R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// Resident set size in KiB (VmRSS of /proc/self/status).
long resident_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::atol(line.c_str() + 6);
    return -1;
}

long mapping_count() {
    std::ifstream maps("/proc/self/maps");
    long n = 0;
    std::string line;
    while (std::getline(maps, line))
        ++n;
    return n;
}

double cpu_ms() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
    return ms(usage.ru_utime) + ms(usage.ru_stime);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    fj::scheduler_options options;
    options.workers = fj::default_worker_count();
    int rounds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--workers") == 0)
            options.workers = static_cast<std::size_t>(std::atol(argv[i + 1]));
        else if (std::strcmp(argv[i], "--rounds") == 0)
            rounds = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: idle_pool [--workers P] [--rounds R]\n");
            return 2;
        }
    }
    const std::size_t p = options.workers;

    // Idle, first (before any pool has left memory for the allocator to reuse): memory and mappings
    // of the workers once they sleep, and the CPU of one idle second.
    const long rss_before = resident_kib();
    const long maps_before = mapping_count();
    long rss_idle = 0;
    long maps_idle = 0;
    double idle_cpu = 0;
    {
        fj::scheduler pool(options);
        pool.submit([] {}).get();
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // every worker asleep
        rss_idle = resident_kib();
        maps_idle = mapping_count();
        const double cpu_before = cpu_ms();
        std::this_thread::sleep_for(std::chrono::seconds(1));
        idle_cpu = cpu_ms() - cpu_before;
    }

    // Start and stop: a pool made and destroyed (its workers started, then joined), against P
    // threads started and joined; rounds alternate which goes first.
    std::vector<double> pool_ms;
    std::vector<double> thread_ms;
    const auto run_pool = [&] {
        const auto start = clock_type::now();
        {
            fj::scheduler pool(options);
            pool.submit([] {}).get(); // started: a task has run
        }
        pool_ms.push_back(ms_since(start));
    };
    const auto run_threads = [&] {
        const auto start = clock_type::now();
        std::vector<std::thread> threads;
        threads.reserve(p);
        for (std::size_t i = 0; i < p; ++i)
            threads.emplace_back([] {});
        for (auto& t : threads)
            t.join();
        thread_ms.push_back(ms_since(start));
    };
    for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
            run_pool();
            run_threads();
        } else {
            run_threads();
            run_pool();
        }
    }

    std::printf("workers=%zu start_stop_ms=%.2f threads_ms=%.2f ratio=%.2f "
                "rss_kib_per_worker=%.1f mappings_per_worker=%.2f idle_cpu_ms_per_s=%.2f\n",
                p, median(pool_ms), median(thread_ms), median(pool_ms) / median(thread_ms),
                double(rss_idle - rss_before) / double(p),
                double(maps_idle - maps_before) / double(p), idle_cpu);
    return 0;
}
