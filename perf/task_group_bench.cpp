// fj::task_group against OpenMP tasks and oneTBB's task_group on a task-per-node unbalanced tree
// (tree_workload.hpp; docs/performance.md#task-group), serial as the reference, in one run.
//
//   task_group_bench [--rounds 9] [--workers 1,2]
//
// Prints per competitor and worker count the median time, the cost per node over serial
// ((T - T_serial) / nodes) and the time ratio to each other competitor at the same worker count.
// Rounds are taken competitor by competitor (each keeps its own pool), interleaved in the order.
#include "driver_cli.hpp"
#include "measure.hpp"
#include "tree_workload.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

void visit(fj::task_group& group, std::uint64_t id, std::atomic<long>& nodes) {
    nodes.fetch_add(1, std::memory_order_relaxed);
    const int children = fj_perf::tree_children(id);
    for (int c = 0; c < children; ++c) {
        const std::uint64_t child = fj_perf::tree_child(id, c);
        group.run([&group, child, &nodes] { visit(group, child, nodes); });
    }
}

long fj_count(int workers, int rounds, std::vector<double>& ms) {
    fj::scheduler pool(static_cast<std::size_t>(workers));
    long result = 0;
    for (int r = 0; r < rounds; ++r) {
        std::atomic<long> nodes{1};
        ms.push_back(fj_perf::seconds_of([&] {
                         pool.execute([&] {
                             fj::task_group group;
                             for (int c = 0; c < fj_perf::k_root_children; ++c) {
                                 const std::uint64_t child = fj_perf::tree_child(0, c);
                                 group.run([&group, child, &nodes] { visit(group, child, nodes); });
                             }
                             group.wait();
                         });
                     }) *
                     1e3);
        result = nodes.load();
    }
    return result;
}

const fj_perf::tree_registrar reg{{"fj task_group", &fj_count}};

struct options {
    int rounds = 9;
    std::vector<int> workers{1, 2};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("task_group_bench", "[--rounds 9] [--workers 1,2]", argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    long nodes = 0;
    std::vector<double> serial_ms;
    for (int r = 0; r < o.rounds; ++r)
        serial_ms.push_back(
            fj_perf::seconds_of([&] { nodes = fj_perf::tree_count_serial_root(); }) * 1e3);
    const double serial = fj_perf::median(serial_ms);
    std::printf("task_group_bench: %ld nodes, %d rounds, load average %s\n", nodes, o.rounds,
                fj_perf::load_average().c_str());
    std::printf("  %-16s %7s %10s %14s\n", "", "workers", "median ms", "ns/node over serial");
    std::printf("  %-16s %7s %10.2f\n", "serial", "-", serial);
    for (const int w : o.workers) {
        std::vector<std::pair<std::string, double>> rows;
        for (const auto& c : fj_perf::tree_competitors()) {
            std::vector<double> ms;
            const long counted = c.count(w, o.rounds, ms);
            if (counted != nodes)
                throw std::runtime_error(c.name + " counted " + std::to_string(counted) +
                                         " nodes, not " + std::to_string(nodes));
            const double t = fj_perf::median(ms);
            rows.emplace_back(c.name, t);
            std::printf("  %-16s %7d %10.2f %14.1f\n", c.name.c_str(), w, t,
                        (t - serial) * 1e6 / static_cast<double>(nodes));
        }
        for (const auto& [name, t] : rows)
            for (const auto& [other, u] : rows)
                if (name != other)
                    std::printf("  %d workers: %s / %s = %.3f\n", w, name.c_str(), other.c_str(),
                                t / u);
    }
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
}
