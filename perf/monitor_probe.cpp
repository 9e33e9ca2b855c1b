// What the rescue monitor costs a long loop, and how soon it rescues a pool whose tasks block after
// running a while (docs/performance.md#blocking).
//   monitor_probe loop [--workers N]
//                           50 x N pieces of 20 ms of computing on N workers (default 2; about
//                           1 s whatever N). Prints the monitor's looks, the kernel states it read
//                           (one /proc read each) and its thread's CPU time during the loop.
//                           Under the fj_fake_cpus preload (FJ_FAKE_CPUS=N) a pool of N > 2
//                           workers on 2 cores is an uncrowded one, as on N cores
//   monitor_probe latency   15 rounds: 2 workers each compute 50 ms, then block on a latch; a
//                           task queued after both blocked opens it. Prints the median and the
//                           longest time from the second block to that task's start
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

fj::scheduler_options workers(std::size_t n) {
    fj::scheduler_options options;
    options.workers = n;
    return options;
}

fj::scheduler_options two_workers() {
    return workers(2);
}

// The CPU time of the process's thread named fj-monitor (the first pool's), in ns, from the
// scheduler's statistics (/proc/self/task/<tid>/schedstat: time on a CPU, waiting, slices).
double monitor_cpu_ns() {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        std::getline(comm, name);
        if (name != "fj-monitor")
            continue;
        std::ifstream stat(task.path() / "schedstat");
        double on_cpu = 0;
        stat >> on_cpu;
        return on_cpu;
    }
    return -1;
}

void compute_for(std::chrono::milliseconds how_long) {
    const auto end = clock_type::now() + how_long;
    while (clock_type::now() < end) {
    }
}

void long_loop(std::size_t n) {
    fj::scheduler pool(workers(n));
    const fj::scheduler_stats before = pool.stats();
    const double cpu_before = monitor_cpu_ns();
    const auto start = clock_type::now();
    const int pieces = static_cast<int>(50 * n);
    pool.execute([pieces] {
        fj::parallel_for(
            0, pieces, [](int) { compute_for(std::chrono::milliseconds(20)); }, fj::grain(1));
    });
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    const double cpu_ms = (monitor_cpu_ns() - cpu_before) / 1e6;
    const fj::scheduler_stats after = pool.stats();
    const auto looks = after.monitor_looks - before.monitor_looks;
    const auto reads = after.monitor_state_reads - before.monitor_state_reads;
    std::printf("loop: workers=%zu ms=%.0f looks=%llu state_reads=%llu reads_per_16ms=%.2f "
                "monitor_cpu_ms=%.3f monitor_cpu_share=%.4f%%\n",
                pool.worker_count(), ms, static_cast<unsigned long long>(looks),
                static_cast<unsigned long long>(reads), static_cast<double>(reads) * 16.0 / ms,
                cpu_ms, 100.0 * cpu_ms / ms);
}

void rescue_latency() {
    std::vector<double> ms;
    for (int round = 0; round < 15; ++round) {
        fj::scheduler pool(two_workers());
        std::latch gate(1);
        std::atomic<int> blocked{0};
        std::atomic<clock_type::rep> last_block{0};
        auto body = [&] {
            compute_for(std::chrono::milliseconds(50));
            last_block.store(clock_type::now().time_since_epoch().count());
            blocked.fetch_add(1);
            gate.wait();
        };
        auto first = pool.submit(body);
        auto second = pool.submit(body);
        while (blocked.load() < 2) {
        }
        // Queued only now, so that a spare, not an idle worker, runs it.
        std::atomic<clock_type::rep> started{0};
        auto opener = pool.submit([&] {
            started.store(clock_type::now().time_since_epoch().count());
            gate.count_down();
        });
        opener.get();
        first.get();
        second.get();
        ms.push_back(std::chrono::duration<double, std::milli>(
                         clock_type::duration(started.load() - last_block.load()))
                         .count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("rescue after a long task blocks: median %.2f ms, longest %.2f ms\n",
                ms[ms.size() / 2], ms.back());
}

} // namespace

int main(int argc, char** argv) {
    if ((argc == 2 || (argc == 4 && std::strcmp(argv[2], "--workers") == 0)) &&
        std::strcmp(argv[1], "loop") == 0) {
        const long n = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 2;
        if (n < 1 || n > 4096) {
            std::fprintf(stderr, "--workers takes 1 to 4096\n");
            return 2;
        }
        long_loop(static_cast<std::size_t>(n));
    } else if (argc == 2 && std::strcmp(argv[1], "latency") == 0) {
        rescue_latency();
    } else {
        std::fprintf(stderr, "usage: %s loop [--workers N] | latency\n", argv[0]);
        return 2;
    }
}
