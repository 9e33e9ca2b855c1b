// The tree with OpenMP tasks: a team of `workers` threads, one seeds the root inside `single`,
// every node's task creates its children's tasks in a loop, and one taskgroup at the root waits
// for every descendant. Only this file of task_group_bench is compiled with the OpenMP flags.
#include "measure.hpp"
#include "tree_workload.hpp"

#include <atomic>
#include <omp.h>

namespace {

void visit(std::uint64_t id, std::atomic<long>& nodes) {
    nodes.fetch_add(1, std::memory_order_relaxed);
    const int children = fj_perf::tree_children(id);
    for (int c = 0; c < children; ++c) {
        const std::uint64_t child = fj_perf::tree_child(id, c);
#pragma omp task firstprivate(child) shared(nodes)
        visit(child, nodes);
    }
}

long count(int workers, int rounds, std::vector<double>& ms) {
    omp_set_dynamic(0);
    long result = 0;
    for (int r = 0; r < rounds; ++r) {
        std::atomic<long> nodes{1};
        ms.push_back(fj_perf::seconds_of([&] {
#pragma omp parallel num_threads(workers) shared(nodes)
#pragma omp single
#pragma omp taskgroup
                         for (int c = 0; c < fj_perf::k_root_children; ++c) {
                             const std::uint64_t child = fj_perf::tree_child(0, c);
#pragma omp task firstprivate(child) shared(nodes)
                             visit(child, nodes);
                         }
                     }) *
                     1e3);
        result = nodes.load();
    }
    return result;
}

const fj_perf::tree_registrar reg{{"omp task", &count}};

} // namespace
