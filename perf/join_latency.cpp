// Join latency in numbers (docs/performance.md#join-latency): how soon a task waiting on
// a stolen child returns once the child is done, when its worker has long unrelated tasks to run
// in the meantime (the oneTBB#942 shape). A parking pool against a helping one, in one process.
//
// Each round, on a 2-worker pool, a root task
//   1. forks a child that spins for --child-ms (50), and waits until the other worker has stolen
//      it (the child says it started);
//   2. submits --long-tasks (2) unrelated tasks that spin for --long-ms (2000) each;
//   3. waits for the child: `get`: child.get(); `join`: the child is fj::join's second branch,
//      stolen, and the first branch returns after step 2.
// Parking, the root's worker goes on with a long task and the worker that finishes the child
// resumes the root at once. Helping, the root's worker runs a long task on top of the root's frame
// and the root returns only when that task is done. The figure is the time from the child's last
// instruction to the root's return; beside it, how many of the long tasks had finished by then.
//
//   join_latency [--child-ms 50] [--long-ms 2000] [--long-tasks 2] [--rounds 5] [--how get,join]
//
// Rounds interleave the two pools (alternating which goes first) and both ways of waiting.
#include "driver_cli.hpp"
#include "forkjoin_common.hpp"
#include "measure.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_perf::driver_cli;
using fj_perf::spin_for;
using fj_perf::split;
using clock_type = std::chrono::steady_clock;
using ms = std::chrono::duration<double, std::milli>;

struct options {
    int child_ms = 50;
    int long_ms = 2000;
    int long_tasks = 2;
    int rounds = 5;
    std::vector<std::string> hows{"get", "join"};
};

options parse(int argc, char** argv) {
    const driver_cli cli("join_latency",
                         "[--child-ms 50] [--long-ms 2000] [--long-tasks 2] [--rounds 5] "
                         "[--how get,join]",
                         argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--child-ms") {
            o.child_ms = cli.integer(value, 1, name);
        } else if (name == "--long-ms") {
            o.long_ms = cli.integer(value, 1, name);
        } else if (name == "--long-tasks") {
            o.long_tasks = cli.integer(value, 1, name);
        } else if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--how") {
            o.hows = split(value);
            for (const auto& h : o.hows)
                if (h != "get" && h != "join")
                    cli.fail("unknown way of waiting '" + h + "' (get, join)");
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

// Waits (spinning) until flag is set; false after 10 s, which means the other worker never
// stole the child: the measurement's premise failed.
bool until_set(const std::atomic<bool>& flag) {
    const auto give_up = clock_type::now() + std::chrono::seconds(10);
    while (!flag.load(std::memory_order_acquire))
        if (clock_type::now() > give_up)
            return false;
    return true;
}

struct round_result {
    double latency_ms; // the child's end to the root's return
    int long_done;     // unrelated tasks already finished when the root returned
};

round_result one_round(fj::scheduler& pool, const std::string& how, const options& o) {
    std::atomic<bool> child_started{false};
    std::atomic<int> long_done{0};
    clock_type::time_point child_end{};
    std::vector<fj::future<void>> long_futures; // filled by the root, awaited by main
    long_futures.reserve(static_cast<std::size_t>(o.long_tasks));

    auto child = [&] {
        child_started.store(true, std::memory_order_release);
        spin_for(std::chrono::milliseconds(o.child_ms));
        child_end = clock_type::now(); // read by the root after its wait: ordered by the join
        return 1;
    };
    auto queue_long_tasks = [&] {
        if (!until_set(child_started))
            throw std::runtime_error("the child was not stolen within 10 s");
        for (int i = 0; i < o.long_tasks; ++i)
            long_futures.push_back(pool.submit([&] {
                spin_for(std::chrono::milliseconds(o.long_ms));
                long_done.fetch_add(1, std::memory_order_release);
            }));
    };

    auto root = pool.submit([&]() -> round_result {
        int value = 0;
        if (how == "get") {
            auto f = pool.fork(child);
            queue_long_tasks();
            value = f.get();
        } else {
            auto [unit, v] = pool.join(
                [&] {
                    queue_long_tasks();
                    return 0;
                },
                child);
            value = v + unit;
        }
        const auto returned = clock_type::now();
        if (value != 1)
            throw std::runtime_error("wrong child result");
        return {ms(returned - child_end).count(), long_done.load(std::memory_order_acquire)};
    });
    const round_result r = root.get();
    for (auto& f : long_futures)
        f.get();
    return r;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("join_latency: child %d ms, %d unrelated tasks of %d ms, %d rounds, 2 workers, "
                "load average %s\n",
                o.child_ms, o.long_tasks, o.long_ms, o.rounds, fj_perf::load_average().c_str());
    fj::scheduler park(fj_perf::pool_options(2, true));
    fj::scheduler help(fj_perf::pool_options(2, false));
    if (!park.stats().parking || help.stats().parking) {
        std::fprintf(stderr, "join_latency: FJ_PARKING overrides the pools' options: unset it\n");
        return 2;
    }
    struct series {
        std::vector<double> latency;
        std::vector<double> long_done;
    };
    // [how][0: park, 1: help]
    std::vector<std::array<series, 2>> results(o.hows.size());
    for (int r = 0; r < o.rounds; ++r)
        for (std::size_t h = 0; h < o.hows.size(); ++h)
            for (int k = 0; k < 2; ++k) {
                const int which = (k + r) % 2; // alternate which pool goes first
                const round_result rr = one_round(which == 0 ? park : help, o.hows[h], o);
                results[h][static_cast<std::size_t>(which)].latency.push_back(rr.latency_ms);
                results[h][static_cast<std::size_t>(which)].long_done.push_back(rr.long_done);
            }
    std::printf("%-5s %-8s %12s %10s %10s %22s\n", "wait", "pool", "median ms", "min ms", "max ms",
                "long tasks done (med)");
    for (std::size_t h = 0; h < o.hows.size(); ++h)
        for (int which = 0; which < 2; ++which) {
            const series& s = results[h][static_cast<std::size_t>(which)];
            std::printf("%-5s %-8s %12.3f %10.3f %10.3f %20.1f/%d\n", o.hows[h].c_str(),
                        which == 0 ? "parking" : "helping", fj_perf::median(s.latency),
                        *std::min_element(s.latency.begin(), s.latency.end()),
                        *std::max_element(s.latency.begin(), s.latency.end()),
                        fj_perf::median(s.long_done), o.long_tasks);
        }
    std::printf("parking pool: %llu parks; helping pool: %llu parks\n",
                static_cast<unsigned long long>(park.stats().total().parks),
                static_cast<unsigned long long>(help.stats().total().parks));
}
