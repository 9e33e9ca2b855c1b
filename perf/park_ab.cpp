// The parking fast path's A/B (docs/performance.md#parking-fast-path): fib with every call
// forking, on a pool that parks waiting tasks and on one that helps while waiting, in one
// process. Each round runs both pools back to back, in an order that alternates between rounds,
// and the ratio park / plain is taken per round: a slow phase of the machine then hits both
// halves of a pair alike, and the median of the paired ratios is the estimate (the median of
// each column separately mixes different phases). Both styles, at each worker count.
//
//   park_ab [--n 37] [--rounds 11] [--workers 1,2] [--style seed,join]
//
// Prints, per style and worker count: the median time of each pool, the median paired ratio,
// its smallest and largest value, and how many rounds the parking pool won.
#include "driver_cli.hpp"
#include "forkjoin_common.hpp"
#include "measure.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

struct options {
    int n = 37;
    int rounds = 11;
    std::vector<int> workers{1, 2};
    std::vector<std::string> styles{"seed", "join"};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli(
        "park_ab", "[--n 37] [--rounds 11] [--workers 1,2] [--style seed,join]", argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--n") {
            o.n = cli.integer(value, 2, name);
        } else if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else if (name == "--style") {
            o.styles = fj_perf::split(value);
            for (const auto& s : o.styles)
                if (s != "seed" && s != "join")
                    cli.fail("unknown style '" + s + "' (seed, join)");
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

// One timed fib(n) on `pool`, from outside it (the drivers' convention), checked.
double run_ms(fj::scheduler& pool, const std::string& style, int n, long expected) {
    long result = 0;
    const double s = fj_perf::seconds_of([&] {
        result = pool.submit([&pool, &style, n] {
                         return style == "seed" ? fj_perf::fib_seed(pool, n)
                                                : fj_perf::fib_join(pool, n);
                     })
                     .get();
    });
    if (result != expected)
        throw std::runtime_error("wrong fib result: " + std::to_string(result));
    return s * 1e3;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    const long expected = fj_perf::fib_serial(o.n);
    const double forks = static_cast<double>(fj_perf::fib_serial(o.n + 1) - 1);
    std::printf("park_ab: fib(%d), %.0f forks, %d paired rounds, load average %s\n", o.n, forks,
                o.rounds, fj_perf::load_average().c_str());
    std::printf("%-6s %7s %11s %11s %13s %9s %9s %10s\n", "style", "workers", "plain ms", "park ms",
                "park/plain", "min", "max", "park won");
    for (const int w : o.workers) {
        fj::scheduler plain(fj_perf::pool_options(w, false));
        fj::scheduler park(fj_perf::pool_options(w, true));
        for (const std::string& style : o.styles) {
            // Untimed warm-up of both: fiber stacks mapped, block caches filled.
            run_ms(plain, style, std::min(o.n, 30), fj_perf::fib_serial(std::min(o.n, 30)));
            run_ms(park, style, std::min(o.n, 30), fj_perf::fib_serial(std::min(o.n, 30)));
            std::vector<double> t_plain, t_park, ratio;
            int park_won = 0;
            for (int r = 0; r < o.rounds; ++r) {
                double a = 0, b = 0;
                if (r % 2 == 0) {
                    a = run_ms(plain, style, o.n, expected);
                    b = run_ms(park, style, o.n, expected);
                } else {
                    b = run_ms(park, style, o.n, expected);
                    a = run_ms(plain, style, o.n, expected);
                }
                t_plain.push_back(a);
                t_park.push_back(b);
                ratio.push_back(b / a);
                park_won += b < a;
            }
            std::printf("%-6s %7d %11.1f %11.1f %13.3f %9.3f %9.3f %7d/%d\n", style.c_str(), w,
                        fj_perf::median(t_plain), fj_perf::median(t_park), fj_perf::median(ratio),
                        *std::min_element(ratio.begin(), ratio.end()),
                        *std::max_element(ratio.begin(), ratio.end()), park_won, o.rounds);
        }
        if (park.stats().parking == false)
            std::printf("note: FJ_PARKING overrides the option: the park pool did not park\n");
    }
}
