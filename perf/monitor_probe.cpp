// What the rescue monitor costs a long loop, and how soon it rescues a pool whose tasks block after
// running a while (docs/performance.md#blocking).
//   monitor_probe loop      100 pieces of 20 ms of computing on 2 workers; run it under
//                           `strace -f -e trace=openat` and count the /proc reads
//   monitor_probe latency   15 rounds: 2 workers each compute 50 ms, then block on a latch; a
//                           task queued after both blocked opens it. Prints the median and the
//                           longest time from the second block to that task's start
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <latch>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

fj::scheduler_options two_workers() {
    fj::scheduler_options options;
    options.workers = 2;
    return options;
}

void compute_for(std::chrono::milliseconds how_long) {
    const auto end = clock_type::now() + how_long;
    while (clock_type::now() < end) {
    }
}

void long_loop() {
    fj::scheduler pool(two_workers());
    const auto start = clock_type::now();
    pool.execute([] {
        fj::parallel_for(
            0, 100, [](int) { compute_for(std::chrono::milliseconds(20)); }, fj::grain(1));
    });
    std::printf("loop: %.0f ms\n",
                std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
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
    if (argc == 2 && std::strcmp(argv[1], "loop") == 0) {
        long_loop();
    } else if (argc == 2 && std::strcmp(argv[1], "latency") == 0) {
        rescue_latency();
    } else {
        std::fprintf(stderr, "usage: %s loop|latency\n", argv[0]);
        return 2;
    }
}
