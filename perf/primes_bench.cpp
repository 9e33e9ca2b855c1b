// oneTBB's primes example, ported the natural way: a segmented sieve as an imperative reduction
// body (primes_workload.hpp), with fj::parallel_reduce(range, body) against oneTBB's
// parallel_reduce(range, body) and one body run serially, in one run
// (docs/performance-algorithms.md#primes).
//
//   primes_bench [--rounds 11] [--workers 1,2] [--n 200000000]
//
// Rounds are paired: each round runs every runtime once, the order rotating, each on a pool that
// lives for the whole run; the ratios are per round, then the median and range are printed.
#include "driver_cli.hpp"
#include "measure.hpp"
#include "primes_workload.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_body = fj_perf::sieve_body<fj::blocked_range<long>, fj::split>;

std::function<fj_perf::primes_result(long)> make_fj(int workers) {
    auto pool = std::make_shared<fj::scheduler>(static_cast<std::size_t>(workers));
    return [pool](long n) {
        const long root = fj_perf::isqrt(n);
        const std::vector<long> primes = fj_perf::small_primes(root);
        fj_body b(primes);
        fj::parallel_reduce(*pool,
                            fj::blocked_range<long>{root + 1, n + 1, fj_perf::k_primes_grain}, b);
        return fj_perf::primes_result{static_cast<long>(primes.size()) + b.count(), b.restarts(),
                                      b.bodies()};
    };
}

std::function<fj_perf::primes_result(long)> make_serial(int) {
    return [](long n) {
        const long root = fj_perf::isqrt(n);
        const std::vector<long> primes = fj_perf::small_primes(root);
        fj_body b(primes);
        b(fj::blocked_range<long>{root + 1, n + 1});
        return fj_perf::primes_result{static_cast<long>(primes.size()) + b.count(), b.restarts(),
                                      b.bodies()};
    };
}

const fj_perf::primes_registrar reg_fj{{"fj body reduce", &make_fj}};

struct options {
    int rounds = 11;
    long n = 200'000'000;
    std::vector<int> workers{1, 2};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("primes_bench", "[--rounds 11] [--workers 1,2] [--n 200000000]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds")
            o.rounds = cli.integer(value, 1, name);
        else if (name == "--n")
            o.n = cli.integer(value, 1000, name);
        else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else
            cli.fail("unknown option " + name);
    });
    return o;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("primes_bench: primes up to %ld, %d paired rounds, load %s\n", o.n, o.rounds,
                fj_perf::load_average().c_str());
    const long expected = make_serial(1)(o.n).primes;
    std::printf("  %ld primes\n", expected);
    for (const int w : o.workers) {
        std::vector<fj_perf::primes_competitor> all{{"serial", &make_serial}};
        for (const auto& c : fj_perf::primes_competitors())
            all.push_back(c);
        std::vector<std::function<fj_perf::primes_result(long)>> runs;
        for (const auto& c : all)
            runs.push_back(c.make(w));
        std::vector<std::vector<double>> ms(all.size());
        std::vector<fj_perf::primes_result> last(all.size());
        for (int r = 0; r < o.rounds; ++r) {
            for (std::size_t k = 0; k < all.size(); ++k) {
                const std::size_t i = (k + static_cast<std::size_t>(r)) % all.size();
                fj_perf::primes_result got;
                ms[i].push_back(fj_perf::seconds_of([&] { got = runs[i](o.n); }) * 1e3);
                if (got.primes != expected)
                    throw std::runtime_error(all[i].name + " counted " +
                                             std::to_string(got.primes));
                last[i] = got;
            }
        }
        std::printf("\n  %d worker%s:\n  %-18s %10s %10s %10s\n", w, w == 1 ? "" : "s", "",
                    "median ms", "bodies", "restarts");
        for (std::size_t i = 0; i < all.size(); ++i)
            std::printf("  %-18s %10.2f %10ld %10ld\n", all[i].name.c_str(), fj_perf::median(ms[i]),
                        last[i].bodies, last[i].restarts);
        std::vector<std::string> names;
        for (const auto& c : all)
            names.push_back(c.name);
        fj_perf::print_paired_ratios(names, ms);
    }
    std::printf("\nload after: %s\n", fj_perf::load_average().c_str());
}
