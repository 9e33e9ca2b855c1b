// sort_bench: a standalone driver timing fj::parallel_sort against std::sort, tbb::parallel_sort
// and std::sort(std::execution::par, ...) (libstdc++ on oneTBB), on the workloads of
// sort_workloads.hpp: 10^7 random ints, 10^6 random doubles, 10^6 random strings.
//
// The parallel sorts run at every --workers count (a pool or a task_arena of that size, started
// and warmed up before timing); std::sort is the serial reference. Rounds are interleaved: each
// round times every configuration once, the start rotating from round to round, with
// --cooldown-ms of idle time between runs, so that a slow phase of a shared machine hits every
// row alike. Besides each row's median, min and max, it prints paired ratios: per round, the
// time of fj over the time of another row at the same worker count (< 1: fj faster), as the
// median and range over rounds. Every run sorts a fresh copy and is checked against std::sort.
//
//   sort_bench [--only ints,doubles,strings] [--reps 7] [--ints 1e7] [--doubles 1e6]
//              [--strings 1e6] [--workers 1,2] [--cooldown-ms 20]
#include "competitors/sort_competitor.hpp"
#include "measure.hpp"
#include "sort_workloads.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace fj_perf;

struct options {
    std::vector<sort_workload> parts{std::begin(k_sort_workloads), std::end(k_sort_workloads)};
    int reps = 7;
    std::uint64_t ints = k_sort_ints_n;
    std::uint64_t doubles = k_sort_doubles_n;
    std::uint64_t strings = k_sort_strings_n;
    std::vector<int> workers{1, 2};
    int cooldown_ms = 20;
};

[[noreturn]] void usage(std::string const& why) {
    std::fprintf(stderr,
                 "sort_bench: %s\n"
                 "usage: sort_bench [--only ints,doubles,strings] [--reps R] [--ints N]\n"
                 "                  [--doubles N] [--strings N] [--workers 1,2] "
                 "[--cooldown-ms MS]\n",
                 why.c_str());
    std::exit(2);
}

// "1000", or "1e7"; at least 1.
std::uint64_t parse_count(std::string const& s) {
    char* end = nullptr;
    double const d = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !(d >= 1) || d > 1e12 || d != std::floor(d))
        usage("bad number: '" + s + "'");
    return static_cast<std::uint64_t>(d);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view const arg = argv[i];
        if (arg == "-h" || arg == "--help")
            usage("help");
        if (i + 1 >= argc)
            usage("missing value after " + std::string(arg));
        std::string const val = argv[++i];
        if (arg == "--only") {
            o.parts.clear();
            for (auto const& p : split(val)) {
                auto const* w =
                    std::find_if(std::begin(k_sort_workloads), std::end(k_sort_workloads),
                                 [&](sort_workload x) { return workload_name(x) == p; });
                if (w == std::end(k_sort_workloads))
                    usage("unknown workload: " + p);
                o.parts.push_back(*w);
            }
        } else if (arg == "--reps") {
            o.reps = static_cast<int>(std::min<std::uint64_t>(parse_count(val), 1000));
        } else if (arg == "--ints") {
            o.ints = parse_count(val);
        } else if (arg == "--doubles") {
            o.doubles = parse_count(val);
        } else if (arg == "--strings") {
            o.strings = parse_count(val);
        } else if (arg == "--workers") {
            o.workers.clear();
            for (auto const& w : split(val))
                o.workers.push_back(static_cast<int>(std::min<std::uint64_t>(parse_count(w), 64)));
        } else if (arg == "--cooldown-ms") {
            o.cooldown_ms = static_cast<int>(std::min<std::uint64_t>(parse_count(val), 10'000));
        } else {
            usage("unknown option " + std::string(arg));
        }
    }
    if (o.parts.empty() || o.workers.empty())
        usage("empty list");
    return o;
}

// One row: std::sort (runner == nullptr) or a competitor at a worker count.
struct row {
    std::string name;
    int workers = 1;
    sort_runner* runner = nullptr;
    std::vector<double> times;
};

template <class T>
void sort_with(row& r, std::vector<T>& v) {
    if (r.runner == nullptr)
        std::sort(v.begin(), v.end());
    else
        r.runner->sort(v);
}

template <class T>
void run_workload(std::string_view name, std::vector<T> const& input, options const& o,
                  std::vector<row>& rows) {
    std::vector<T> expected = input;
    std::sort(expected.begin(), expected.end());
    auto checked = [&](row& r, std::vector<T>& v) {
        if (v != expected) {
            std::fprintf(stderr, "sort_bench: %s at %d workers sorted %.*s wrongly\n",
                         r.name.c_str(), r.workers, static_cast<int>(name.size()), name.data());
            std::exit(1);
        }
    };
    for (row& r : rows) { // warm-up: pools started, pages touched, result checked
        std::vector<T> v = input;
        sort_with(r, v);
        checked(r, v);
        r.times.clear();
    }
    interference_meter const meter;
    for (int round = 0; round < o.reps; ++round)
        for (std::size_t k = 0; k < rows.size(); ++k) {
            row& r = rows[(k + static_cast<std::size_t>(round)) % rows.size()];
            std::vector<T> v = input;
            cooldown(o.cooldown_ms);
            r.times.push_back(seconds_of([&] { sort_with(r, v); }));
            checked(r, v);
        }

    std::printf("%.*s: %zu elements, %d rounds\n", static_cast<int>(name.size()), name.data(),
                input.size(), o.reps);
    std::printf("  %-10s %2s  %9s %9s %9s  %-8s  %s\n", "row", "w", "median", "min", "max",
                "speed-up", "fj / row, paired: median [min, max]");
    row const& serial = rows.front();
    for (row const& r : rows) {
        std::vector<double> speedups;
        for (std::size_t i = 0; i < r.times.size(); ++i)
            speedups.push_back(serial.times[i] / r.times[i]);
        std::string vs_fj = "";
        if (r.name != "fj" && r.runner != nullptr)
            for (row const& f : rows)
                if (f.name == "fj" && f.workers == r.workers) {
                    std::vector<double> ratio;
                    for (std::size_t i = 0; i < r.times.size(); ++i)
                        ratio.push_back(f.times[i] / r.times[i]);
                    vs_fj = fmt("%.3f", median(ratio)) + " [" +
                            fmt("%.3f", *std::min_element(ratio.begin(), ratio.end())) + ", " +
                            fmt("%.3f", *std::max_element(ratio.begin(), ratio.end())) + "]";
                }
        std::printf("  %-10s %2d  %8.1fms %8.1fms %8.1fms  %7.2fx  %s\n", r.name.c_str(), r.workers,
                    1e3 * median(r.times), 1e3 * *std::min_element(r.times.begin(), r.times.end()),
                    1e3 * *std::max_element(r.times.begin(), r.times.end()), median(speedups),
                    vs_fj.c_str());
    }
    meter.report(name);
}

} // namespace

int main(int argc, char** argv) {
    options const o = parse(argc, argv);
    std::printf("sort_bench: load average %s\n", load_average().c_str());

    std::vector<std::unique_ptr<sort_runner>> runners;
    std::vector<row> rows{{"std::sort", 1, nullptr, {}}};
    auto const probe = make_sort_ints(1'000'000);
    for (sort_competitor const& c : sort_competitors()) {
        std::printf("  %-8s %s\n", c.name.c_str(), c.what.c_str());
        for (int w : o.workers) {
            runners.push_back(c.make(w));
            auto v = probe;
            std::printf("           %d workers: comparisons of 10^6 ints ran on %d threads\n", w,
                        runners.back()->threads_used(v));
            rows.push_back({c.name, w, runners.back().get(), {}});
        }
    }
    std::printf("\n");
    for (sort_workload w : o.parts) {
        switch (w) {
        case sort_workload::ints:
            run_workload(workload_name(w), make_sort_ints(o.ints), o, rows);
            break;
        case sort_workload::doubles:
            run_workload(workload_name(w), make_sort_doubles(o.doubles), o, rows);
            break;
        case sort_workload::strings:
            run_workload(workload_name(w), make_sort_strings(o.strings), o, rows);
            break;
        }
    }
    std::printf("sort_bench: load average %s\n", load_average().c_str());
}
