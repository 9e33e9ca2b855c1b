// oneTBB's square example as a pipeline (pipeline_workload.hpp): fj::parallel_pipeline against
// tbb::parallel_pipeline and a serial loop, on the plain square (about 100 ns of stage work per
// item, so the pipeline's own cost shows) and with a few microseconds of work per item in the
// parallel stage (docs/performance-algorithms.md#pipeline).
//
//   pipeline_bench [--rounds 11] [--workers 1,2] [--n 1000000] [--heavy-n 100000]
//                  [--work 3000] [--tokens 8]
//
// Rounds are paired: each round runs every runtime once, the order rotating, each on a pool that
// lives for the whole run; the ratios are per round, then the median and range are printed.
#include "driver_cli.hpp"
#include "measure.hpp"
#include "pipeline_workload.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

fj_perf::pipeline_runner make_fj(int workers) {
    auto pool = std::make_shared<fj::scheduler>(static_cast<std::size_t>(workers));
    return [pool](const std::string& text, int tokens, int work) {
        std::istringstream in(text);
        std::string out;
        fj::parallel_pipeline(
            *pool, static_cast<std::size_t>(tokens),
            fj::make_filter<void, long long>(fj::filter_mode::serial_in_order,
                                             [&](fj::flow_control& fc) -> long long {
                                                 long long x = 0;
                                                 if (!(in >> x))
                                                     fc.stop();
                                                 return x;
                                             }) &
                fj::make_filter<long long, std::string>(
                    fj::filter_mode::parallel,
                    [work](long long x) { return fj_perf::square_item(x, work); }) &
                fj::make_filter<std::string, void>(fj::filter_mode::serial_in_order,
                                                   [&](const std::string& s) { out += s; }));
        return out;
    };
}

fj_perf::pipeline_runner make_serial(int) {
    return [](const std::string& text, int, int work) {
        std::istringstream in(text);
        std::string out;
        long long x = 0;
        while (in >> x)
            out += fj_perf::square_item(x, work);
        return out;
    };
}

const fj_perf::pipeline_registrar reg_fj{{"fj", &make_fj}};

struct options {
    int rounds = 11;
    int n = 1'000'000;
    int heavy_n = 100'000;
    int work = 3000;
    int tokens = 8;
    std::vector<int> workers{1, 2};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("pipeline_bench",
                                  "[--rounds 11] [--workers 1,2] [--n 1000000] "
                                  "[--heavy-n 100000] [--work 3000] [--tokens 8]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds")
            o.rounds = cli.integer(value, 1, name);
        else if (name == "--n")
            o.n = cli.integer(value, 1, name);
        else if (name == "--heavy-n")
            o.heavy_n = cli.integer(value, 1, name);
        else if (name == "--work")
            o.work = cli.integer(value, 1, name);
        else if (name == "--tokens")
            o.tokens = cli.integer(value, 1, name);
        else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else
            cli.fail("unknown option " + name);
    });
    return o;
}

void run_case(const options& o, const char* title, int n, int work) {
    const std::string text = fj_perf::pipeline_text(n);
    const std::string expected = make_serial(1)(text, 0, work);
    std::printf("\n%s: %d numbers, %d tokens, work %d\n", title, n, o.tokens, work);
    for (const int w : o.workers) {
        std::vector<fj_perf::pipeline_competitor> all{{"serial", &make_serial}};
        for (const auto& c : fj_perf::pipeline_competitors())
            all.push_back(c);
        std::vector<fj_perf::pipeline_runner> runs;
        for (const auto& c : all)
            runs.push_back(c.make(w));
        std::vector<std::vector<double>> ms(all.size());
        for (int r = 0; r < o.rounds; ++r) {
            for (std::size_t k = 0; k < all.size(); ++k) {
                const std::size_t i = (k + static_cast<std::size_t>(r)) % all.size();
                std::string got;
                ms[i].push_back(fj_perf::seconds_of([&] { got = runs[i](text, o.tokens, work); }) *
                                1e3);
                if (got != expected)
                    throw std::runtime_error(all[i].name + ": wrong output");
            }
        }
        std::printf("  %d worker%s: %-8s %10s %12s\n", w, w == 1 ? " " : "s", "", "median ms",
                    "ns per item");
        for (std::size_t i = 0; i < all.size(); ++i) {
            const double m = fj_perf::median(ms[i]);
            std::printf("  %-19s %10.2f %12.0f\n", all[i].name.c_str(), m, m * 1e6 / n);
        }
        std::vector<std::string> names;
        for (const auto& c : all)
            names.push_back(c.name);
        fj_perf::print_paired_ratios(names, ms);
    }
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("pipeline_bench: %d paired rounds, load %s\n", o.rounds,
                fj_perf::load_average().c_str());
    run_case(o, "square", o.n, 0);
    run_case(o, "square + work", o.heavy_n, o.work);
    std::printf("\nload after: %s\n", fj_perf::load_average().c_str());
}
