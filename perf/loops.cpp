// loops: a standalone driver (no Google Benchmark) timing parallel loops on forkjoin against the
// serial loop, OpenMP worksharing and oneTBB, on three workloads (loop_workloads.hpp):
//
//   bbp_digits  hex digits of pi at positions [0, D): uneven iterations (later ones cost more).
//               fj::parallel_for, adaptive. Checked against the serial digits.
//   bbp_series  the BBP series, N terms: a reduction. fj::parallel_reduce with std::plus<>.
//               Checked: |sum - pi| < 1e-15.
//   empty_for   a near-empty body (~1 ns) over N indices: the cost of the loop machinery itself.
//               fj::parallel_for, adaptive. Checked: every 4096th index ran.
//   merge_sort  not a loop: a parallel merge sort of N keys with fj::join (dc_workloads.hpp).
//               Checked: equal to std::sort's result.
//   nqueens     not a loop: the N-queens count with fj::join in the first rows. Checked: the
//               known count.
//
// Competitors come from the loop registration table (competitors/loop_competitor.hpp); whichever
// runtimes were built take part. forkjoin runs at every --workers count, the other runtimes at the
// largest one (at every count too with --all-workers, for time-vs-workers charts); serial is the
// plain loop. Per workload, every configuration's pool is started and
// warmed up (untimed, checked), then the runs are interleaved round-robin (--reps rounds, the
// start rotating each round, --cooldown-ms of idle time between runs) and the median is reported,
// so a slow phase of the machine hits everyone alike. Every run checks its result.
//
//   loops [--only bbp_digits,bbp_series,empty_for,merge_sort,nqueens] [--reps 5]
//         [--digits 3500] [--terms 100000000] [--n 100000000] [--sort-n 10000000]
//         [--queens 14] [--workers 1,2] [--all-workers]
//         [--cooldown-ms 20] [--json FILE]
//
// --json FILE also writes every timing (not only the medians) to FILE, for perf/plot.py.
#include "competitors/loop_competitor.hpp"
#include "json_writer.hpp"
#include "loop_workloads.hpp"
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace fj_perf; // split, median, seconds_of, interference_meter, cooldown, fmt
using fj_perf::loop_workload;

struct options {
    std::set<loop_workload> parts{std::begin(fj_perf::k_loop_workloads),
                                  std::end(fj_perf::k_loop_workloads)};
    int reps = fj_perf::k_loop_reps;
    std::uint64_t digits = fj_perf::k_loop_digits;
    std::uint64_t terms = fj_perf::k_loop_terms;
    std::uint64_t n = fj_perf::k_loop_n;
    std::uint64_t sort_n = fj_perf::k_sort_n;
    std::uint64_t queens = fj_perf::k_queens_n;
    std::vector<int> workers{std::begin(fj_perf::k_workers), std::end(fj_perf::k_workers)};
    int cooldown_ms =
        20; // idle time between timed runs: lets other runtimes' threads stop spinning
    bool all_workers = false; // time the OpenMP and TBB rows at every --workers count too
    std::string json_path;    // "" = no JSON output

    int max_workers() const { return *std::max_element(workers.begin(), workers.end()); }
    std::uint64_t size(loop_workload w) const {
        switch (w) {
        case loop_workload::bbp_digits:
            return digits;
        case loop_workload::bbp_series:
            return terms;
        case loop_workload::empty_for:
            return n;
        case loop_workload::merge_sort:
            return sort_n;
        case loop_workload::nqueens:
            return queens;
        }
        return 0;
    }
};

[[noreturn]] void usage(std::string const& why) {
    std::fprintf(stderr,
                 "loops: %s\n"
                 "usage: loops [--only bbp_digits,bbp_series,empty_for,merge_sort,nqueens]\n"
                 "             [--reps R] [--digits D] [--terms N] [--n N] [--sort-n N]\n"
                 "             [--queens N] [--workers 1,2] [--all-workers]\n"
                 "             [--cooldown-ms MS] [--json FILE]\n"
                 "numbers: integers, or 1e8-style\n",
                 why.c_str());
    std::exit(2);
}

// "3500", "100000000" or "1e8"; at least `lo`.
std::uint64_t parse_count(std::string_view s, std::uint64_t lo) {
    std::string const str{s};
    char* end = nullptr;
    if (str.empty() || str[0] == '-')
        usage("bad number: '" + str + "'");
    std::uint64_t v = 0;
    if (str.find_first_of("eE") != std::string::npos) {
        double const d = std::strtod(str.c_str(), &end);
        if (*end != '\0' || !(d >= 0) || d > 1e18 || d != std::floor(d))
            usage("bad number: '" + str + "'");
        v = static_cast<std::uint64_t>(d);
    } else {
        v = std::strtoull(str.c_str(), &end, 10);
        if (*end != '\0')
            usage("bad number: '" + str + "'");
    }
    if (v < lo)
        usage("number below " + std::to_string(lo) + ": '" + str + "'");
    return v;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view const arg = argv[i];
        if (arg == "-h" || arg == "--help")
            usage("help");
        if (arg == "--all-workers") {
            o.all_workers = true;
            continue;
        }
        if (i + 1 >= argc)
            usage("missing value after " + std::string(arg));
        std::string_view const val = argv[++i];
        if (arg == "--only") {
            o.parts.clear();
            for (auto const& p : split(val)) {
                auto const* w = std::find_if(
                    std::begin(fj_perf::k_loop_workloads), std::end(fj_perf::k_loop_workloads),
                    [&](loop_workload x) { return fj_perf::workload_name(x) == p; });
                if (w == std::end(fj_perf::k_loop_workloads))
                    usage("unknown workload: " + p);
                o.parts.insert(*w);
            }
            if (o.parts.empty())
                usage("--only: empty list");
        } else if (arg == "--reps") {
            o.reps = static_cast<int>(std::min<std::uint64_t>(parse_count(val, 1), 1000));
        } else if (arg == "--digits") {
            o.digits = parse_count(val, 1);
            if (o.digits > 10'000'000)
                usage("--digits above 10^7: BBP digit extraction is exact only below ~10^7");
        } else if (arg == "--terms") {
            o.terms = parse_count(val, 1);
        } else if (arg == "--n") {
            o.n = parse_count(val, 1);
        } else if (arg == "--sort-n") {
            o.sort_n = parse_count(val, 1);
        } else if (arg == "--queens") {
            o.queens = parse_count(val, 1);
            if (o.queens > fj_perf::k_queens_max)
                usage("--queens above " + std::to_string(fj_perf::k_queens_max) +
                      ": no known count to check against");
        } else if (arg == "--workers") {
            o.workers.clear();
            for (auto const& p : split(val))
                o.workers.push_back(
                    static_cast<int>(std::min<std::uint64_t>(parse_count(p, 1), 256)));
            if (o.workers.empty())
                usage("--workers: empty list");
        } else if (arg == "--cooldown-ms") {
            o.cooldown_ms = static_cast<int>(std::min<std::uint64_t>(parse_count(val, 0), 10'000));
        } else if (arg == "--json") {
            o.json_path = std::string(val);
        } else {
            usage("unknown option: " + std::string(arg));
        }
    }
    return o;
}

// ---- One workload ---------------------------------------------------------------------------

struct config {
    std::string name;
    std::string what;
    int workers; // 0 = the serial loop
    bool reference;
    std::unique_ptr<fj_perf::loop_runner> runner;
    std::vector<double> seconds;

    std::string label() const { return workers == 0 ? name : name + "@" + std::to_string(workers); }
};

// The buffers of one workload at one size, and the checks of a finished run.
class workload_state {
public:
    workload_state(loop_workload w, std::uint64_t n) : m_workload(w), m_n(n) {
        if (w == loop_workload::bbp_digits) {
            m_digits.resize(static_cast<std::size_t>(n));
            m_expected.resize(static_cast<std::size_t>(n));
            fj_perf::loop_io const ref{n, m_expected.data(), nullptr};
            fj_perf::bbp_digits_serial(ref); // untimed: the reference the others must match
        } else if (w == loop_workload::empty_for) {
            m_marks.resize(fj_perf::mark_count(n));
        } else if (w == loop_workload::merge_sort) {
            m_input = fj_perf::sort_input(n);
            m_sorted = m_input;
            std::sort(m_sorted.begin(), m_sorted.end()); // untimed: the reference
            m_keys.resize(m_input.size());
            m_scratch.resize(m_input.size());
        }
    }

    // Untimed: poison the outputs so a run that skips indices cannot pass on stale values.
    fj_perf::loop_io prepare() {
        std::fill(m_digits.begin(), m_digits.end(), std::uint8_t{0xFF});
        std::fill(m_marks.begin(), m_marks.end(), ~std::uint64_t{0});
        std::copy(m_input.begin(), m_input.end(), m_keys.begin()); // merge_sort: unsorted again
        return {m_n, m_digits.data(), m_marks.data(), m_keys.data(), m_scratch.data()};
    }

    void check(std::string const& who, double result) const {
        switch (m_workload) {
        case loop_workload::bbp_digits:
            fj_perf::check_digits(who, m_digits, m_expected);
            break;
        case loop_workload::bbp_series:
            fj_perf::check_series(who, result);
            break;
        case loop_workload::empty_for:
            fj_perf::check_marks(who, m_marks);
            break;
        case loop_workload::merge_sort:
            fj_perf::check_sorted(who, m_keys, m_sorted);
            break;
        case loop_workload::nqueens:
            fj_perf::check_queens(who, m_n, result);
            break;
        }
    }

private:
    loop_workload m_workload;
    std::uint64_t m_n;
    std::vector<std::uint8_t> m_digits;
    std::vector<std::uint8_t> m_expected;
    std::vector<std::uint64_t> m_marks;
    std::vector<fj_perf::sort_key> m_input;  // merge_sort: the unsorted keys of every run
    std::vector<fj_perf::sort_key> m_sorted; // merge_sort: std::sort's result
    std::vector<fj_perf::sort_key> m_keys;
    std::vector<fj_perf::sort_key> m_scratch;
};

double run_config(config& c, loop_workload w, fj_perf::loop_io const& io) {
    if (c.runner)
        return c.runner->run(io);
    switch (w) {
    case loop_workload::bbp_digits:
        fj_perf::bbp_digits_serial(io);
        return 0;
    case loop_workload::bbp_series:
        return fj_perf::bbp_series_serial(io.n);
    case loop_workload::empty_for:
        fj_perf::empty_for_serial(io);
        return 0;
    case loop_workload::merge_sort:
        fj_perf::merge_sort_serial(io);
        return 0;
    case loop_workload::nqueens:
        return fj_perf::nqueens_serial(io);
    }
    return 0;
}

std::string describe(loop_workload w, std::uint64_t n) {
    auto const count = std::to_string(n);
    switch (w) {
    case loop_workload::bbp_digits:
        return "hex digits of pi at positions [0, " + count + "), one position per index";
    case loop_workload::bbp_series:
        return "sum of bbp::series_term(k), k in [0, " + count + "), checked |sum - pi| < 1e-15";
    case loop_workload::empty_for:
        return "near-empty body over [0, " + count +
               "): opaque(i); if ((i & 4095) == 0) marks[i >> 12] = i";
    case loop_workload::merge_sort:
        return "merge sort of " + count +
               " random 32-bit keys (join at every split of the sort and of the merge)";
    case loop_workload::nqueens:
        return "count the " + count + "-queens placements (join in the first " +
               std::to_string(fj_perf::k_queens_cutoff) + " rows)";
    }
    return "?";
}

// Times one workload, prints its table and adds its members ("rows": every configuration with
// all its timings) to the JSON object the caller has opened.
void workload_part(loop_workload w, options const& o, json_writer& json) {
    std::uint64_t const n = o.size(w);
    std::string const wname{fj_perf::workload_name(w)};
    int const kmax = o.max_workers();

    std::vector<config> configs;
    bool const loop = w != loop_workload::merge_sort && w != loop_workload::nqueens;
    configs.push_back({"serial",
                       loop ? "the plain loop, same body"
                            : "the same algorithm, both branches one after the other",
                       0,
                       false,
                       nullptr,
                       {}});
    for (auto const& c : fj_perf::loop_competitors()) {
        if (c.workload != w)
            continue;
        if (c.sweep_workers || o.all_workers) {
            // A non-sweeping runtime stays the ratio columns' reference at the largest count.
            for (int k : o.workers)
                configs.push_back(
                    {c.name, c.what, k, !c.sweep_workers && k == kmax, c.make(k), {}});
        } else {
            configs.push_back({c.name, c.what, kmax, true, c.make(kmax), {}});
        }
    }

    // Warm-up: start every runtime's threads and fault in its memory, untimed but checked, on a
    // smaller instance (bbp_digits costs ~D^2, so D/4 is ~1/16 of a run).
    {
        std::uint64_t const warm_n = std::max<std::uint64_t>(1, n / 4);
        workload_state warm(w, warm_n);
        for (auto& c : configs) {
            auto const io = warm.prepare();
            warm.check(c.label() + " (warm-up)", run_config(c, w, io));
        }
    }
    workload_state state(w, n);
    cooldown(o.cooldown_ms);

    // Idle check: every pool is alive now; an idle runtime should burn ~no CPU.
    double const cpu0 = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double const idle_ms = (cpu_seconds() - cpu0) * 1e3;

    for (int rep = 0; rep < o.reps; ++rep) {
        for (std::size_t j = 0; j < configs.size(); ++j) {
            auto& c = configs[(j + static_cast<std::size_t>(rep)) % configs.size()];
            auto const io = state.prepare();
            auto const t0 = clock_type::now();
            double const result = run_config(c, w, io);
            auto const t1 = clock_type::now();
            state.check(c.label(), result);
            c.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
            cooldown(o.cooldown_ms);
        }
    }

    // ---- report ----
    std::printf("%s: %s\n", wname.c_str(), describe(w, n).c_str());
    std::printf("median of %d interleaved rounds; idle CPU with all %zu pools alive: %.1f ms over "
                "200 ms\n",
                o.reps, configs.size() - 1, idle_ms);
    std::vector<std::size_t> refs;
    for (std::size_t i = 0; i < configs.size(); ++i) {
        if (configs[i].reference)
            refs.push_back(i);
    }
    double const t_serial = median(configs[0].seconds);
    std::printf("%-12s %7s %11s %10s %10s %9s", "row", "workers", "median ms", "min ms", "max ms",
                "speed-up");
    for (std::size_t r : refs)
        std::printf(" %14s", ("T/" + configs[r].name).c_str());
    std::printf("\n");
    for (auto const& c : configs) {
        double const t = median(c.seconds);
        std::printf("%-12s %7s %11.2f %10.2f %10.2f %9.3f", c.name.c_str(),
                    c.workers == 0 ? "-" : std::to_string(c.workers).c_str(), t * 1e3,
                    *std::min_element(c.seconds.begin(), c.seconds.end()) * 1e3,
                    *std::max_element(c.seconds.begin(), c.seconds.end()) * 1e3, t_serial / t);
        for (std::size_t r : refs)
            std::printf(" %14s", fmt("%.3f", t / median(configs[r].seconds)).c_str());
        std::printf("\n");
    }
    std::printf("speed-up = T_serial / T_row");
    if (!refs.empty())
        std::printf(
            ";  T/X = T_row / T_X (< 1: the row is faster than X, which ran with %d threads)",
            kmax);
    std::printf("\n");
    // Paired ratios: within one round every row ran once, minutes apart at most, so the ratio of
    // two rows in the same round is free of the slow drifts that move whole rounds; their median
    // over the rounds is a steadier estimate than the ratio of the two columns' medians.
    if (!refs.empty()) {
        std::printf("%-12s %7s %21s", "paired", "workers", "");
        for (std::size_t r : refs)
            std::printf(" %14s", ("T/" + configs[r].name).c_str());
        std::printf("\n");
        for (auto const& c : configs) {
            if (c.workers == 0)
                continue;
            std::printf("%-12s %7d %21s", c.name.c_str(), c.workers, "");
            for (std::size_t r : refs) {
                std::vector<double> ratio;
                for (std::size_t i = 0; i < c.seconds.size(); ++i)
                    ratio.push_back(c.seconds[i] / configs[r].seconds[i]);
                std::printf(" %14s", fmt("%.3f", median(ratio)).c_str());
            }
            std::printf("\n");
        }
        std::printf("paired T/X = median over the rounds of T_row / T_X in the same round\n");
    }
    std::vector<std::string> seen;
    for (auto const& c : configs) {
        if (std::find(seen.begin(), seen.end(), c.name) != seen.end())
            continue;
        seen.push_back(c.name);
        std::printf("  %-12s %s\n", c.name.c_str(), c.what.c_str());
    }
    for (auto& c : configs) {
        if (c.runner == nullptr)
            continue;
        if (auto s = c.runner->stats(); !s.empty())
            std::printf("  counters %s (warm-up and all rounds): %s\n", c.label().c_str(),
                        s.c_str());
    }

    json.key("workload").value(wname).key("size").value(static_cast<long long>(n));
    json.key("description").value(describe(w, n)).key("reps").value(o.reps);
    json.key("idle_cpu_ms").value(idle_ms).key("rows").begin_array();
    for (auto const& c : configs) {
        json.begin_object().key("name").value(c.name).key("what").value(c.what);
        json.key("workers").value(c.workers).key("reference").value(c.reference);
        json.key("seconds").array(c.seconds).end_object();
    }
    json.end_array();
}

} // namespace

int main(int argc, char** argv) {
    options const o = parse(argc, argv);
    std::printf("loops: %u hardware threads; load average %s; competitors:",
                std::thread::hardware_concurrency(), load_average().c_str());
    std::vector<std::string> seen;
    for (auto const& c : fj_perf::loop_competitors()) {
        if (std::find(seen.begin(), seen.end(), c.name) == seen.end()) {
            seen.push_back(c.name);
            std::printf(" %s", c.name.c_str());
        }
    }
    std::printf("\n\n");
    json_writer json;
    json.begin_object().key("program").value("loops");
    json.key("hardware_threads").value(static_cast<long>(std::thread::hardware_concurrency()));
    json.key("load_average_start").value(load_average()).key("workloads").begin_array();
    for (loop_workload w : fj_perf::k_loop_workloads) {
        if (!o.parts.count(w))
            continue;
        interference_meter const m;
        json.begin_object();
        workload_part(w, o, json);
        auto const seen_by_meter = m.report(fj_perf::workload_name(w));
        json.key("wall_seconds").value(seen_by_meter.wall_seconds);
        json.key("other_cpu_seconds").value(seen_by_meter.other_cpu_seconds).end_object();
    }
    std::string const load_end = load_average();
    json.end_array().key("load_average_end").value(load_end).end_object();
    std::printf("load average at the end: %s\n", load_end.c_str());
    if (!o.json_path.empty() && !write_json_file(o.json_path, json))
        return 1;
    return 0;
}
