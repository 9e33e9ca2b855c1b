// The tree with oneTBB: every node's task runs its children on one tbb::task_group in a loop, one
// wait at the root, in an arena of `workers` slots.
#include "measure.hpp"
#include "tree_workload.hpp"

#include <atomic>

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

namespace {

void visit(tbb::task_group& group, std::uint64_t id, std::atomic<long>& nodes) {
    nodes.fetch_add(1, std::memory_order_relaxed);
    const int children = fj_perf::tree_children(id);
    for (int c = 0; c < children; ++c) {
        const std::uint64_t child = fj_perf::tree_child(id, c);
        group.run([&group, child, &nodes] { visit(group, child, nodes); });
    }
}

long count(int workers, int rounds, std::vector<double>& ms) {
    tbb::task_arena arena(workers);
    long result = 0;
    for (int r = 0; r < rounds; ++r) {
        std::atomic<long> nodes{1};
        ms.push_back(fj_perf::seconds_of([&] {
                         arena.execute([&] {
                             tbb::task_group group;
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

const fj_perf::tree_registrar reg{{"tbb task_group", &count}};

} // namespace
