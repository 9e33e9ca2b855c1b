// A* on a random geometric graph in the shape of oneTBB's shortpath example (astar_workload.hpp):
// helper tasks that share one open set and start more helpers with task_group::run() from inside
// their edge loop; fj::task_group against tbb::task_group and the serial search
// (docs/performance.md#astar).
//
//   astar_bench [--rounds 7] [--workers 1,2] [--vertices 4000,20000] [--repeat 20]
//
// Rounds are paired: each round runs every row once, the order rotating, each on a pool that
// lives for the whole worker count; a row's time in a round is the mean of --repeat searches.
// Prints per row the median ms per search and its range, the entries popped and helpers started
// per search, and the per-round ratios (median and range). Every search's length is checked
// against the serial one: a wrong length ends the program with status 1.
#include "astar_workload.hpp"
#include "driver_cli.hpp"
#include "measure.hpp"
#include "paired_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using namespace fj_perf::astar;

runner make_fj(int workers) {
    auto pool = std::make_shared<fj::scheduler>(static_cast<std::size_t>(workers));
    return [pool](const graph& gr) {
        return pool->execute([&] {
            fj::task_group group;
            parallel_search<fj::task_group> search(gr, group);
            return search.run();
        });
    };
}

runner make_serial(int) {
    return [](const graph& gr) { return search_serial(gr); };
}

const registrar reg_fj{{"fj", &make_fj}};

struct options {
    int rounds = 7;
    int repeat = 20;
    std::vector<int> workers{1, 2};
    std::vector<int> vertices{4000, 20000};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli(
        "astar_bench", "[--rounds 7] [--workers 1,2] [--vertices 4000,20000] [--repeat 20]", argc,
        argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds")
            o.rounds = cli.integer(value, 1, name);
        else if (name == "--repeat")
            o.repeat = cli.integer(value, 1, name);
        else if (name == "--workers")
            o.workers = cli.integers(value, 1, name);
        else if (name == "--vertices")
            o.vertices = cli.integers(value, 2, name);
        else
            cli.fail("unknown option " + name);
    });
    return o;
}

// The same length up to rounding: two shortest paths may sum their edges in another order.
bool same_length(double a, double b) {
    return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// false if a search found another length than the serial one.
bool run_case(const options& o, int n) {
    const graph gr = make_graph(n);
    const result expected = search_serial(gr);
    std::printf("\n%d vertices, %zu edges: shortest path 0 -> %d of length %.3f, serial pops %ld, "
                "at most %d helpers live\n",
                n, gr.edges.size(), gr.goal(), expected.length, expected.pops, std::max(1, n / 16));
    bool ok = true;
    for (const int w : o.workers) {
        const auto all =
            fj_perf::rows_with_serial(competitor{"serial", &make_serial}, competitors());
        auto runs = fj_perf::runners_of(all, w);
        std::vector<std::vector<double>> ms(all.size());
        std::vector<std::vector<double>> pops(all.size()), helpers(all.size());
        runs[0](gr); // warm the caches once
        for (int r = 0; r < o.rounds; ++r) {
            fj_perf::for_each_row_rotated(r, all.size(), [&](std::size_t i) {
                const auto t = fj_perf::timed_repeats(o.repeat, [&] { return runs[i](gr); });
                ms[i].push_back(t.mean_ms);
                for (const auto& g : t.results) {
                    if (!same_length(g.length, expected.length)) {
                        std::printf("  WRONG: %s at %d workers found length %.17g, serial %.17g\n",
                                    all[i].name.c_str(), w, g.length, expected.length);
                        ok = false;
                    }
                    pops[i].push_back(static_cast<double>(g.pops));
                    helpers[i].push_back(static_cast<double>(g.helpers));
                }
            });
        }
        fj_perf::print_workers_label(w);
        std::printf("%9s %19s %9s %9s\n", "median ms", "[range]", "pops", "helpers");
        for (std::size_t i = 0; i < all.size(); ++i) {
            const fj_perf::spread t = fj_perf::spread_of(ms[i]);
            std::printf("  %-19s %9.3f [%7.3f-%9.3f] %9.0f %9.0f\n", all[i].name.c_str(), t.median,
                        t.lo, t.hi, fj_perf::median(pops[i]), fj_perf::median(helpers[i]));
        }
        fj_perf::print_paired_ratios(fj_perf::names_of(all), ms);
    }
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("astar_bench: %d paired rounds of %d searches, load %s\n", o.rounds, o.repeat,
                fj_perf::load_average().c_str());
    bool ok = true;
    for (const int n : o.vertices)
        ok = run_case(o, n) && ok;
    std::printf("\nload after: %s\n", fj_perf::load_average().c_str());
    if (!ok) {
        std::printf("astar_bench: a search found another length than the serial one\n");
        return 1;
    }
}
