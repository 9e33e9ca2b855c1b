// The task-per-node tree of task_group_bench (docs/performance.md#task-group): an unbalanced
// binomial tree in the manner of the OpenMP task benchmarks and UTS. The root has k_root_children
// children; every other node has k_branch children with probability k_branch_percent / 100 (a
// mean just below one child: subcritical, so the tree is finite, but deep and lopsided), decided
// by a hash of the node's id. Each competitor visits it with one task per node, started in a loop
// by the node's task, and one wait at the root; every run is checked against the serial count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fj_perf {

constexpr int k_root_children = 3000;
constexpr int k_branch = 5;
constexpr std::uint64_t k_branch_per_mille = 199; // mean 0.995 children per node

inline std::uint64_t tree_hash(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The children of node `id` (not the root): k_branch or none.
inline int tree_children(std::uint64_t id) {
    return tree_hash(id) % 1000 < k_branch_per_mille ? k_branch : 0;
}

inline std::uint64_t tree_child(std::uint64_t id, int c) {
    return tree_hash(id * 8 + static_cast<std::uint64_t>(c) + 1);
}

[[gnu::noinline]] inline long tree_count_serial(std::uint64_t id) {
    long n = 1;
    const int children = tree_children(id);
    for (int c = 0; c < children; ++c)
        n += tree_count_serial(tree_child(id, c));
    return n;
}

inline long tree_count_serial_root() {
    long n = 1;
    for (int c = 0; c < k_root_children; ++c)
        n += tree_count_serial(tree_child(0, c));
    return n;
}

// A competitor: counts the nodes with one task per node on `workers` threads, the pool started
// and stopped outside the timed part. Returns the count (checked by the driver).
struct tree_competitor {
    std::string name;
    long (*count)(int workers, int rounds, std::vector<double>& ms);
};

inline std::vector<tree_competitor>& tree_competitors() {
    static std::vector<tree_competitor> table;
    return table;
}

struct tree_registrar {
    explicit tree_registrar(tree_competitor c) { tree_competitors().push_back(std::move(c)); }
};

} // namespace fj_perf
