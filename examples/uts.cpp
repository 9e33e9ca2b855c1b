// Unbalanced Tree Search (UTS) on forkjoin: count the nodes of a binomial UTS tree, one task per
// child, and check the count against the published one.
//
//   The tree is implicit (examples/uts_tree.hpp): a node is a 20-byte SHA-1 state, child i's state
//   is the SHA-1 of the parent's state and i, and a node's state decides how many children it has.
//   The root has b0 children; any other node has m children with probability q, else none. With
//   q m close to 1 the tree is deep and very unbalanced: T3's root subtrees range from 1 node to
//   2.4 million, and its deepest path is 1,572 levels long (T3L: 17,844).
//
//   The traversal is a plain recursion: visit(node) forks its children with fj::join over a
//   recursive halving of the child index range, and each leaf of that split visits one child. So
//   every child is its own task, a thief steals half of the remaining children at once, and the
//   program's recursion is as deep as the tree (a few join frames per level). It runs on the
//   tasks' fiber stacks (64 MiB by default), with no depth cut-off and no explicit stack.
//
//   Stack use, measured with one worker (so the whole traversal stays on one stack), GCC 12 -O3:
//   the fork-per-child recursion takes about 2 KB per tree level (a visit and up to three join
//   levels), so T3L's 17,844 levels take 36 MB, 56% of a fiber stack; T3's 1,572 levels take
//   3.7 MB. The serial recursion takes 450 bytes per level, 8.0 MB for T3L: nearly all of a
//   thread's default 8 MiB stack, which is why the serial traversal runs as a task too.
//
// Trees (the UTS sample trees, sample_workloads.sh of the UTS distribution; BOTS test.input is T3):
//   T3   b0 = 2000, q = 0.124875, m = 8, seed 42
//        4,112,897 nodes, depth 1,572, 3,599,034 leaves
//   T3L  b0 = 2000, q = 0.200014, m = 5, seed 7
//        111,345,631 nodes, depth 17,844, 89,076,904 leaves
//   T3S  T3's first 120 root subtrees: b0 = 120, and T3's q, m and seed
//        6,817 nodes, depth 67, 5,979 leaves
//   No small binomial tree is published (T3 is the smallest), so T3S's counts are this program's
//   own: every run checks them against the serial traversal, and the recorded ones come from a
//   serial run (the same code reproduces T3's and T3L's published counts). T3XXL (b0 = 2000,
//   q = 0.499995, m = 2, seed 316: 2,793,220,501 nodes) is not offered.
//
// Usage: uts [T3|T3L|T3S] [--workers W] [--serial]
//   tree         default T3.
//   --workers W  run on a scheduler of W workers; default: the default scheduler
//                (FJ_WORKERS, else one worker per CPU in the affinity mask).
//   --serial     also run the serial traversal (one task, no forks) and compare; T3S always does.
// Prints the tree, its node count, depth and leaves, the times and nodes/s, whether the counts
// matched, and the statistics. Exits 1 on a mismatch.
#include "cli.hpp"
#include "uts_tree.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

constexpr uts::binomial_tree trees[] = {
    {"T3", 2000, 0.124875, 8, 42, 4112897, 1572, 3599034, true},
    {"T3L", 2000, 0.200014, 5, 7, 111345631, 17844, 89076904, true},
    {"T3S", 120, 0.124875, 8, 42, 6817, 67, 5979, false},
};

// The serial reference: a depth-first recursion, one node per call.
uts::counts visit_serial(const uts::binomial_tree& tree, const uts::node& n) {
    const int k = n.children(tree);
    if (k == 0)
        return {1, 1, n.height};
    uts::counts total{1, 0, n.height};
    for (int i = 0; i < k; ++i)
        total = total + visit_serial(tree, n.child(i));
    return total;
}

uts::counts visit(const uts::binomial_tree& tree, const uts::node& n);

// Visits children lo..hi-1 of `parent`: one task per child, by halving the range with fj::join.
uts::counts visit_children(const uts::binomial_tree& tree, const uts::node& parent, int lo,
                           int hi) {
    if (hi - lo == 1)
        return visit(tree, parent.child(lo));
    const int mid = lo + (hi - lo) / 2;
    // References are safe: fj::join returns only after both branches are done.
    auto [a, b] = fj::join([&] { return visit_children(tree, parent, lo, mid); },
                           [&] { return visit_children(tree, parent, mid, hi); });
    return a + b;
}

uts::counts visit(const uts::binomial_tree& tree, const uts::node& n) {
    const int k = n.children(tree);
    if (k == 0)
        return {1, 1, n.height};
    return uts::counts{1, 0, n.height} + visit_children(tree, n, 0, k);
}

const uts::binomial_tree& find_tree(const char* name) {
    for (const uts::binomial_tree& tree : trees)
        if (std::strcmp(tree.name, name) == 0)
            return tree;
    cli::usage((std::string("unknown tree '") + name + "' (T3, T3L or T3S)").c_str());
}

void print_counts(const char* what, const uts::counts& c) {
    std::printf("%s %llu nodes, depth %d, %llu leaves", what,
                static_cast<unsigned long long>(c.nodes), c.depth,
                static_cast<unsigned long long>(c.leaves));
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"uts", "uts [T3|T3L|T3S] [--workers W] [--serial]"};
    const uts::binomial_tree* tree = &trees[0];
    int workers = 0;
    bool serial = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = cli::parse<int>(
                argv[++i], 1, static_cast<int>(fj::scheduler_options::max_workers), "--workers");
        else if (std::strcmp(argv[i], "--serial") == 0)
            serial = true;
        else if (argv[i][0] != '-')
            tree = &find_tree(argv[i]);
        else
            cli::usage((std::string("unknown option '") + argv[i] + "'").c_str());
    }
    // T3S has no published counts: the serial traversal is its reference.
    serial = serial || !tree->published;

    std::printf("UTS %s: binomial tree, b0 = %g, q = %g, m = %d, seed %d\n", tree->name, tree->b0,
                tree->q, tree->m, static_cast<int>(tree->seed));
    if (!uts::sha1_self_test()) {
        std::printf("MISMATCH: SHA-1 does not reproduce the FIPS 180-1 test vectors\n");
        return 1;
    }

    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(static_cast<std::size_t>(workers));
    fj::scheduler& pool = own ? *own : fj::default_scheduler();

    // Both traversals run as one task on the pool, so their recursion is on a fiber stack; the
    // root's future is waited for from main.
    const uts::node root = uts::root(*tree);
    uts::counts parallel, serial_counts;
    const double t_parallel =
        cli::seconds([&] { parallel = pool.submit([&] { return visit(*tree, root); }).get(); });
    double t_serial = 0;
    if (serial)
        t_serial = cli::seconds(
            [&] { serial_counts = pool.submit([&] { return visit_serial(*tree, root); }).get(); });

    const uts::counts expected{tree->nodes, tree->leaves, tree->depth};
    std::printf("nodes      %llu\n", static_cast<unsigned long long>(parallel.nodes));
    std::printf("max depth  %d\n", parallel.depth);
    std::printf("leaves     %llu\n", static_cast<unsigned long long>(parallel.leaves));
    std::printf("workers %zu\n", pool.worker_count());
    std::printf("parallel  %10.3f ms   %7.3f M nodes/s   (fj::join, one task per child)\n",
                t_parallel * 1e3, static_cast<double>(parallel.nodes) / t_parallel * 1e-6);
    if (serial)
        std::printf("serial    %10.3f ms   %7.3f M nodes/s   (one task, plain recursion)   "
                    "speed-up %.2fx\n",
                    t_serial * 1e3, static_cast<double>(serial_counts.nodes) / t_serial * 1e-6,
                    t_serial / t_parallel);

    if (parallel != expected || (serial && serial_counts != parallel)) {
        std::printf("MISMATCH: %s: ", tree->name);
        print_counts("parallel", parallel);
        if (serial)
            print_counts("; serial", serial_counts);
        print_counts(tree->published ? "; published" : "; recorded", expected);
        std::printf("\n");
        return 1;
    }
    if (tree->published)
        print_counts((std::string(tree->name) + " matched the published counts:").c_str(),
                     expected);
    else
        print_counts((std::string(tree->name) +
                      " matched the serial traversal and the recorded counts (not published):")
                         .c_str(),
                     expected);
    std::printf("%s\n", serial && tree->published ? "; the serial traversal agrees" : "");
    std::cout << "statistics:\n" << pool.stats();
    return 0;
}
