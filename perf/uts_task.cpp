// UTS T3 (4,112,897 nodes, depth 1,572; examples/uts_tree.hpp) counted four ways, in rotated
// paired rounds (docs/performance.md#uts-task):
//
//   serial       the plain recursion of examples/uts.cpp, run as one task (on a fiber stack)
//   fj::join     examples/uts.cpp's traversal: a task per child, by halving the child range with
//                fj::join
//   task join    the same shape with fj::task coroutines: the halving by co_await fj::join, and a
//                child visited by co_await (a frame per node, as a user writes it)
//   task scope   fj::task coroutines with fj::task_scope: every child spawned, then one join; each
//                child writes its counts to its own slot of a vector in the parent's frame (what
//                a user writes for a count of children known at run time)
//
// Every run is checked against the published counts.
//
//   uts_task [--rounds 5] [--workers 1,2]      the table
//   uts_task --only serial|join|task|scope [--workers W]
//       one traversal in a fresh process, then its time and the process's peak RSS (getrusage's
//       ru_maxrss): a variant's memory without the others' frames, stacks or caches in it.
#include "measure.hpp"
#include "uts_tree.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <vector>

#include <forkjoin/forkjoin.hpp>
#include <forkjoin/task_scope.hpp>

namespace {

constexpr uts::binomial_tree t3{"T3", 2000, 0.124875, 8, 42, 4112897, 1572, 3599034, true};

uts::counts visit_serial(const uts::node& n) {
    const int k = n.children(t3);
    uts::counts total{1, k == 0 ? 1u : 0u, n.height};
    for (int i = 0; i < k; ++i)
        total = total + visit_serial(n.child(i));
    return total;
}

uts::counts visit_join(const uts::node& n);

uts::counts join_children(const uts::node& parent, int lo, int hi) {
    if (hi - lo == 1)
        return visit_join(parent.child(lo));
    const int mid = lo + (hi - lo) / 2;
    auto [a, b] = fj::join([&] { return join_children(parent, lo, mid); },
                           [&] { return join_children(parent, mid, hi); });
    return a + b;
}

uts::counts visit_join(const uts::node& n) {
    const int k = n.children(t3);
    if (k == 0)
        return {1, 1, n.height};
    return uts::counts{1, 0, n.height} + join_children(n, 0, k);
}

fj::task<uts::counts> visit_task(uts::node n);

// `parent` lives in the awaiting frame, which stays suspended until both halves are done.
fj::task<uts::counts> task_children(const uts::node& parent, int lo, int hi) {
    if (hi - lo == 1)
        co_return co_await visit_task(parent.child(lo));
    const int mid = lo + (hi - lo) / 2;
    auto [a, b] = co_await fj::join(task_children(parent, lo, mid), task_children(parent, mid, hi));
    co_return a + b;
}

fj::task<uts::counts> visit_task(uts::node n) {
    const int k = n.children(t3);
    if (k == 0)
        co_return uts::counts{1, 1, n.height};
    co_return uts::counts{1, 0, n.height} + co_await task_children(n, 0, k);
}

fj::task<void> visit_scope(uts::node n, uts::counts& out) {
    const int k = n.children(t3);
    if (k == 0) {
        out = {1, 1, n.height};
        co_return;
    }
    std::vector<uts::counts> part(static_cast<std::size_t>(k)); // a slot per child: no sharing
    fj::task_scope scope;
    for (int i = 0; i < k; ++i)
        scope.spawn(visit_scope(n.child(i), part[static_cast<std::size_t>(i)]));
    co_await scope.join();
    uts::counts total{1, 0, n.height};
    for (const uts::counts& c : part)
        total = total + c;
    out = total;
}

const std::vector<std::string> names{"serial", "fj::join", "task join", "task scope"};

// Every row's root runs on a worker, and main waits on a std::future. (An fj::future's get() from
// main may run a still-queued task itself, on main as a caller of the pool:
// docs/design/callers.md#take-over. For the fj::join row on a 1-worker pool that made a run of
// two threads, the caller's and the worker's, whose times went from 1.1 to 2.8 times serial from
// one round to the next.) Shared, so the promise outlives a set_value() still returning.
using result = std::shared_ptr<std::promise<uts::counts>>;

fj::task<void> task_root(uts::node root, result r) {
    r->set_value(co_await visit_task(root));
}

fj::task<void> scope_root(uts::node root, result r) {
    uts::counts out;
    co_await visit_scope(root, out);
    r->set_value(out);
}

uts::counts run_variant(fj::scheduler& pool, std::size_t variant) {
    const uts::node root = uts::root(t3);
    const result r = std::make_shared<std::promise<uts::counts>>();
    std::future<uts::counts> done = r->get_future();
    switch (variant) { // the fj::futures are dropped: the std::future says when
    case 0:
        (void)pool.submit([root, r] { r->set_value(visit_serial(root)); });
        break;
    case 1:
        (void)pool.submit([root, r] { r->set_value(visit_join(root)); });
        break;
    case 2:
        (void)fj::async(pool, task_root(root, r));
        break;
    default:
        (void)fj::async(pool, scope_root(root, r));
        break;
    }
    return done.get();
}

bool check(std::size_t variant, const uts::counts& c) {
    const uts::counts expected{t3.nodes, t3.leaves, t3.depth};
    if (c == expected)
        return true;
    std::fprintf(stderr, "%s: %llu nodes, %llu leaves, depth %d; published %llu, %llu, %d\n",
                 names[variant].c_str(), static_cast<unsigned long long>(c.nodes),
                 static_cast<unsigned long long>(c.leaves), c.depth,
                 static_cast<unsigned long long>(t3.nodes),
                 static_cast<unsigned long long>(t3.leaves), t3.depth);
    return false;
}

int only(const std::string& which, int workers) {
    const auto it = std::find(names.begin(), names.end(),
                              which == "join"    ? "fj::join"
                              : which == "task"  ? "task join"
                              : which == "scope" ? "task scope"
                                                 : which);
    if (it == names.end()) {
        std::fprintf(stderr, "--only: serial, join, task or scope\n");
        return 2;
    }
    const auto variant = static_cast<std::size_t>(it - names.begin());
    fj::scheduler pool(static_cast<std::size_t>(workers));
    uts::counts c;
    const double s = fj_perf::seconds_of([&] { c = run_variant(pool, variant); });
    if (!check(variant, c))
        return 1;
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    std::printf("%s, %d worker(s): %llu nodes (published count), %.1f ms, peak RSS %ld KiB, "
                "load average %s\n",
                names[variant].c_str(), workers, static_cast<unsigned long long>(c.nodes), s * 1e3,
                u.ru_maxrss, fj_perf::load_average().c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    int rounds = 5;
    std::vector<std::string> worker_counts{"1", "2"};
    std::string which;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--rounds") == 0)
            rounds = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--workers") == 0)
            worker_counts = fj_perf::split(argv[i + 1]);
        else if (std::strcmp(argv[i], "--only") == 0)
            which = argv[i + 1];
    }
    if (!uts::sha1_self_test()) {
        std::fprintf(stderr, "SHA-1 does not reproduce the FIPS 180-1 test vectors\n");
        return 1;
    }
    if (!which.empty())
        return only(which, std::atoi(worker_counts.front().c_str()));

    std::printf("UTS T3, %d rounds, load average %s\n", rounds, fj_perf::load_average().c_str());
    for (const std::string& w : worker_counts) {
        fj::scheduler pool(static_cast<std::size_t>(std::atoi(w.c_str())));
        std::vector<std::vector<double>> ms(names.size());
        const fj_perf::interference_meter meter; // flags a table other processes disturbed
        for (int round = 0; round < rounds; ++round)
            for (std::size_t k = 0; k < names.size(); ++k) {
                const std::size_t row = (k + static_cast<std::size_t>(round)) % names.size();
                uts::counts c;
                const double s = fj_perf::seconds_of([&] { c = run_variant(pool, row); });
                if (!check(row, c))
                    return 1;
                ms[row].push_back(s * 1e3);
            }
        std::printf("%s worker(s), ms, median (min-max); every run counted 4,112,897 nodes:\n",
                    w.c_str());
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto [lo, hi] = std::minmax_element(ms[i].begin(), ms[i].end());
            std::printf("  %-10s %8.1f (%.1f-%.1f)\n", names[i].c_str(), fj_perf::median(ms[i]),
                        *lo, *hi);
        }
        fj_perf::print_paired_ratios(names, ms);
        meter.report(w + " worker(s)");
    }
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
    return 0;
}
