// overhead: a standalone driver (no Google Benchmark) answering three questions in one run.
//
//   1. What does a fork cost? fib in the seed style (no cutoff) on 1 worker against the serial
//      reference: ns per fork = (T1 - Tserial) / forks. With --cutoff C, coarse tasks: T1/Tserial
//      should be within a few percent of 1. Also the 2-worker speed-up and the ratio to oneTBB.
//   2. Throughput of tiny tasks submitted from outside the pool (ns per task).
//   3. Submit-to-start latency on an idle (sleeping) pool: median and p99.
//
// Competitors come from the registration table (competitors/competitor.hpp); whichever were
// built take part. fib runs are interleaved (round-robin over every competitor and worker count,
// repeated --reps times, the start rotating each round) and the median is reported, so a slow
// phase of the machine hits everyone alike. Every run checks its result.
//
//   overhead [--n 30,35 | --n 30..35] [--reps 5] [--cutoff C] [--workers 1,2]
//            [--tasks 1000000] [--samples 1000] [--only fib,tasks,latency] [--cooldown-ms 20]
//            [--json FILE]
//
// --json FILE also writes every timing (not only the medians) to FILE, for perf/plot.py.
#include "competitors/competitor.hpp"
#include "json_writer.hpp"
#include "measure.hpp"
#include "workloads.hpp"

#include <algorithm>
#include <chrono>
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

struct options {
    std::vector<int> ns;
    int reps = fj_perf::k_overhead_reps;
    int cutoff = 0;
    std::vector<int> workers{std::begin(fj_perf::k_workers), std::end(fj_perf::k_workers)};
    long tasks = fj_perf::k_tiny_tasks;
    int samples = fj_perf::k_latency_samples;
    std::set<std::string> parts{"fib", "tasks", "latency"};
    int cooldown_ms =
        20; // idle time between timed runs: lets other runtimes' threads stop spinning
    std::string json_path; // "" = no JSON output
};

[[noreturn]] void usage(char const* why) {
    std::fprintf(
        stderr,
        "overhead: %s\n"
        "usage: overhead [--n 30,35 | --n 30..35] [--reps R] [--cutoff C] [--workers 1,2]\n"
        "                [--tasks N] [--samples S] [--only fib,tasks,latency]\n"
        "                [--cooldown-ms MS] [--json FILE]\n",
        why);
    std::exit(2);
}

long parse_long(std::string_view s) {
    char* end = nullptr;
    std::string const str{s};
    long const v = std::strtol(str.c_str(), &end, 10);
    if (str.empty() || *end != '\0' || v < 0)
        usage(("bad number: " + str).c_str());
    return v;
}

// "30,32,35" or "30..35".
std::vector<int> parse_ints(std::string_view s) {
    std::vector<int> out;
    if (auto const dots = s.find(".."); dots != std::string_view::npos) {
        long const lo = parse_long(s.substr(0, dots));
        long const hi = parse_long(s.substr(dots + 2));
        for (long v = lo; v <= hi; ++v)
            out.push_back(static_cast<int>(v));
    } else {
        for (auto const& part : split(s))
            out.push_back(static_cast<int>(parse_long(part)));
    }
    if (out.empty())
        usage("empty list");
    return out;
}

options parse(int argc, char** argv) {
    options o;
    for (int v = fj_perf::k_overhead_n_first; v <= fj_perf::k_overhead_n_last; ++v) {
        o.ns.push_back(v);
    }
    for (int i = 1; i < argc; ++i) {
        std::string_view const arg = argv[i];
        if (arg == "-h" || arg == "--help")
            usage("help");
        if (i + 1 >= argc)
            usage(("missing value after " + std::string(arg)).c_str());
        std::string_view const val = argv[++i];
        if (arg == "--n") {
            o.ns = parse_ints(val);
            for (int n : o.ns) {
                if (n > 45)
                    usage("n > 45 would run for minutes");
            }
        } else if (arg == "--reps") {
            o.reps = static_cast<int>(std::max(1L, parse_long(val)));
        } else if (arg == "--cutoff") {
            o.cutoff = static_cast<int>(parse_long(val));
        } else if (arg == "--workers") {
            o.workers = parse_ints(val);
            for (int k : o.workers) {
                if (k < 1)
                    usage("workers must be >= 1");
            }
        } else if (arg == "--tasks") {
            o.tasks = std::max(1L, parse_long(val));
        } else if (arg == "--samples") {
            o.samples = static_cast<int>(std::max(1L, parse_long(val)));
        } else if (arg == "--only") {
            o.parts.clear();
            for (auto const& p : split(val)) {
                if (p != "fib" && p != "tasks" && p != "latency")
                    usage(("unknown part: " + p).c_str());
                o.parts.insert(p);
            }
        } else if (arg == "--cooldown-ms") {
            o.cooldown_ms = static_cast<int>(parse_long(val));
        } else if (arg == "--json") {
            o.json_path = std::string(val);
        } else {
            usage(("unknown option: " + std::string(arg)).c_str());
        }
    }
    return o;
}

template <class T>
T percentile(std::vector<T> v, double p) { // nearest-rank
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999999);
    rank = std::clamp<std::size_t>(rank, 1, v.size());
    return v[rank - 1];
}

// ---- 1. fib ---------------------------------------------------------------------------------

struct fib_config {
    std::string name;
    int workers; // 0 = the serial reference
    std::unique_ptr<fj_perf::fib_runner> runner;

    long run(int n, int cutoff) { return runner ? runner->fib(n, cutoff) : fj_perf::fib_serial(n); }
};

// Two copies of the serial code at once, on two threads: what this machine gives two threads of
// fib before any runtime is involved (a VM's two vCPUs can share one physical core's execution
// units, and then two threads of port-bound code run slower than one). 2 * Ts / T is the ceiling
// for a 2-worker speed-up of fib here. The thread's start (tens of µs) is inside the timing.
class serial_pair final : public fj_perf::fib_runner {
public:
    long fib(int n, int) override {
        long other = 0;
        std::thread helper([&] { other = fj_perf::fib_serial(n); });
        long const mine = fj_perf::fib_serial(n);
        helper.join();
        return mine == other ? mine : -1;
    }
};
constexpr char k_serial_pair[] = "serial-x2";

// Paired by round: scale * a[r] / b[r] of each round on its own (both run close together, so a
// slow stretch of the machine moves both), as "median (min-max)".
std::string paired_ratio(std::vector<double> const& a, std::vector<double> const& b, double scale) {
    std::vector<double> ratios;
    for (std::size_t r = 0; r < a.size() && r < b.size(); ++r)
        ratios.push_back(scale * a[r] / b[r]);
    if (ratios.empty())
        return "-";
    auto const [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    return fmt("%.2f", median(ratios)) + " (" + fmt("%.2f", *lo) + "-" + fmt("%.2f", *hi) + ")";
}

// Each part prints its tables and adds its members (every timing) to the JSON object that the
// caller has opened for it.
void fib_part(options const& o, json_writer& json) {
    std::vector<fib_config> configs;
    configs.push_back({"serial", 0, nullptr});
    if (std::find(o.workers.begin(), o.workers.end(), 2) != o.workers.end())
        configs.push_back({k_serial_pair, 2, std::make_unique<serial_pair>()});
    for (auto const& c : fj_perf::fib_competitors()) {
        for (int k : o.workers)
            configs.push_back({c.name, k, c.make(k)});
    }

    // Warm-up: start every runtime's threads and fault in its memory, untimed but checked.
    int const warm_n = std::min(25, *std::min_element(o.ns.begin(), o.ns.end()));
    for (auto& c : configs)
        fj_perf::check_fib(c.name, warm_n, c.run(warm_n, o.cutoff));
    cooldown(o.cooldown_ms);

    // Idle check: every pool is alive now; an idle runtime should burn ~no CPU.
    double const cpu0 = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double const idle_ms = (cpu_seconds() - cpu0) * 1e3;
    std::printf("idle CPU with all %zu pools alive: %.1f ms over 200 ms\n\n", configs.size() - 1,
                idle_ms);

    // samples[config][n index]
    std::vector<std::vector<std::vector<double>>> samples(
        configs.size(), std::vector<std::vector<double>>(o.ns.size()));
    for (std::size_t ni = 0; ni < o.ns.size(); ++ni) {
        int const n = o.ns[ni];
        for (int rep = 0; rep < o.reps; ++rep) {
            for (std::size_t j = 0; j < configs.size(); ++j) {
                auto& c = configs[(j + static_cast<std::size_t>(rep)) % configs.size()];
                long r = 0;
                double const s = seconds_of([&] { r = c.run(n, o.cutoff); });
                fj_perf::check_fib(c.name + "@" + std::to_string(c.workers), n, r);
                samples[static_cast<std::size_t>(&c - configs.data())][ni].push_back(s);
                cooldown(o.cooldown_ms);
            }
        }
    }

    auto find = [&](std::string const& name, int k) -> int {
        for (std::size_t i = 0; i < configs.size(); ++i) {
            if (configs[i].name == name && configs[i].workers == k)
                return static_cast<int>(i);
        }
        return -1;
    };
    bool const has1 = std::find(o.workers.begin(), o.workers.end(), 1) != o.workers.end();
    int const kmax = *std::max_element(o.workers.begin(), o.workers.end());

    for (std::size_t ni = 0; ni < o.ns.size(); ++ni) {
        int const n = o.ns[ni];
        long const forks = fj_perf::fork_count(n, o.cutoff);
        auto med = [&](int idx) { return idx < 0 ? -1.0 : median(samples[std::size_t(idx)][ni]); };
        double const ts = med(0);
        std::printf("fib(%d) = %ld   forks = %ld   cutoff = %s   median of %d interleaved rounds\n",
                    n, fj_perf::fib_exact(n), forks,
                    o.cutoff > 2 ? std::to_string(o.cutoff).c_str() : "none", o.reps);
        std::printf("%-10s", "");
        for (int k : o.workers)
            std::printf(" %9s", fmt("T%.0f ms", k).c_str());
        std::printf(" %10s %8s %8s %17s", "ns/fork@1", "T1/Ts", fmt("T1/T%.0f", kmax).c_str(),
                    "paired (min-max)");
        for (int k : o.workers)
            std::printf(" %10s", fmt("tbb/this@%.0f", k).c_str());
        std::printf("\n%-10s %9.2f\n", "serial", ts * 1e3);
        std::vector<std::string> seen;
        for (auto const& c : configs) {
            if (c.workers == 0 || c.name == k_serial_pair ||
                std::find(seen.begin(), seen.end(), c.name) != seen.end())
                continue;
            seen.push_back(c.name);
            std::printf("%-10s", c.name.c_str());
            for (int k : o.workers)
                std::printf(" %9.2f", med(find(c.name, k)) * 1e3);
            double const t1 = has1 ? med(find(c.name, 1)) : -1;
            double const tk = med(find(c.name, kmax));
            std::string const paired =
                has1 && kmax > 1 ? paired_ratio(samples[std::size_t(find(c.name, 1))][ni],
                                                samples[std::size_t(find(c.name, kmax))][ni], 1)
                                 : "-";
            std::printf(" %10s %8s %8s %17s",
                        has1 ? fmt("%.2f", (t1 - ts) * 1e9 / double(forks)).c_str() : "-",
                        has1 ? fmt("%.3f", t1 / ts).c_str() : "-",
                        has1 ? fmt("%.2f", t1 / tk).c_str() : "-", paired.c_str());
            for (int k : o.workers) {
                int const tbb = find("tbb", k);
                std::printf(" %10s",
                            tbb < 0 ? "-" : fmt("%.2f", med(tbb) / med(find(c.name, k))).c_str());
            }
            std::printf("\n");
        }
        if (int const pair = find(k_serial_pair, 2); pair >= 0)
            std::printf("serial fib(%d) on 2 threads at once: %.2f ms; this machine's ceiling for "
                        "a 2-worker speed-up of fib, 2 * Ts / T paired: %s\n",
                        n, med(pair) * 1e3,
                        paired_ratio(samples[0][ni], samples[std::size_t(pair)][ni], 2).c_str());
        std::printf("\n");
    }
    std::printf(
        "ns/fork@1 = (T1 - Ts) / forks;  T1/T%d = speed-up (of the medians; paired: the median "
        "and range of each round's own);  tbb/this@k = T_tbb / T_row at k "
        "workers (> 1: row beats oneTBB task_group)\n",
        kmax);
    for (auto& c : configs) {
        if (c.runner == nullptr)
            continue;
        if (auto s = c.runner->stats(); !s.empty()) {
            std::printf("  counters %s@%d (all runs): %s\n", c.name.c_str(), c.workers, s.c_str());
        }
    }

    json.key("cutoff").value(o.cutoff).key("reps").value(o.reps).key("idle_cpu_ms").value(idle_ms);
    json.key("sizes").begin_array();
    for (std::size_t ni = 0; ni < o.ns.size(); ++ni) {
        json.begin_object().key("n").value(o.ns[ni]);
        json.key("forks").value(fj_perf::fork_count(o.ns[ni], o.cutoff)).key("rows").begin_array();
        for (std::size_t i = 0; i < configs.size(); ++i) {
            json.begin_object().key("name").value(configs[i].name);
            json.key("workers").value(configs[i].workers);
            json.key("seconds").array(samples[i][ni]).end_object();
        }
        json.end_array().end_object();
    }
    json.end_array();
}

// ---- 2. tiny-task throughput ----------------------------------------------------------------

void tasks_part(options const& o, json_writer& json) {
    struct row {
        std::string name;
        int workers;
        long count;
        std::int64_t (*fn)(int, long);
        std::vector<double> ns_per_task;
    };
    std::vector<row> rows;
    for (auto const& c : fj_perf::task_competitors()) {
        long const count = std::min(o.tasks, c.max_tasks);
        if (!c.honours_workers) {
            rows.push_back({c.name, 0, count, c.throughput, {}});
            continue;
        }
        for (int k : o.workers)
            rows.push_back({c.name, k, count, c.throughput, {}});
    }
    for (int rep = 0; rep < o.reps; ++rep) {
        for (auto& r : rows) {
            auto const ns = r.fn(std::max(r.workers, 1), r.count); // checks its own result
            r.ns_per_task.push_back(static_cast<double>(ns) / static_cast<double>(r.count));
            cooldown(o.cooldown_ms);
        }
    }
    std::printf("tiny tasks submitted from the main thread, all awaited (median of %d rounds)\n",
                o.reps);
    std::printf("%-12s %8s %10s %10s\n", "competitor", "workers", "tasks", "ns/task");
    for (auto const& r : rows) {
        std::printf("%-12s %8s %10ld %10.1f\n", r.name.c_str(),
                    r.workers ? std::to_string(r.workers).c_str() : "-", r.count,
                    median(r.ns_per_task));
    }
    json.key("reps").value(o.reps).key("rows").begin_array();
    for (auto const& r : rows) {
        json.begin_object().key("name").value(r.name).key("workers").value(r.workers);
        json.key("tasks").value(r.count).key("ns_per_task").array(r.ns_per_task).end_object();
    }
    json.end_array();
}

// ---- 3. submit-to-start latency on an idle pool ---------------------------------------------

void latency_part(options const& o, json_writer& json) {
    std::printf("submit-to-start latency on an idle pool (%d samples, %lld us idle before each)\n",
                o.samples, static_cast<long long>(fj_perf::k_latency_gap.count()));
    std::printf("%-12s %8s %12s %12s %12s\n", "competitor", "workers", "median ns", "p99 ns",
                "max ns");
    json.key("samples").value(o.samples);
    json.key("gap_us").value(static_cast<long long>(fj_perf::k_latency_gap.count()));
    json.key("rows").begin_array();
    for (auto const& c : fj_perf::task_competitors()) {
        if (c.latency == nullptr)
            continue;
        std::vector<int> ks = c.honours_workers ? o.workers : std::vector<int>{0};
        for (int k : ks) {
            auto const v = c.latency(std::max(k, 1), o.samples, fj_perf::k_latency_gap);
            auto const p50 = static_cast<long long>(percentile(v, 50));
            auto const p99 = static_cast<long long>(percentile(v, 99));
            auto const max = static_cast<long long>(*std::max_element(v.begin(), v.end()));
            std::printf("%-12s %8s %12lld %12lld %12lld\n", c.name.c_str(),
                        k ? std::to_string(k).c_str() : "-", p50, p99, max);
            json.begin_object().key("name").value(c.name).key("workers").value(k);
            json.key("median_ns").value(p50).key("p99_ns").value(p99);
            json.key("max_ns").value(max).end_object();
        }
    }
    json.end_array();
}

} // namespace

int main(int argc, char** argv) {
    options const o = parse(argc, argv);
    std::string fibs;
    std::string tasks;
    for (auto const& c : fj_perf::fib_competitors())
        fibs += " " + c.name;
    for (auto const& c : fj_perf::task_competitors())
        tasks += " " + c.name;
    std::printf("overhead: %u hardware threads; fib competitors:%s; task competitors:%s\n\n",
                std::thread::hardware_concurrency(), fibs.c_str(), tasks.c_str());
    json_writer json;
    json.begin_object().key("program").value("overhead");
    json.key("hardware_threads").value(static_cast<long>(std::thread::hardware_concurrency()));
    json.key("load_average_start").value(load_average());
    // Runs one part inside its own JSON member, with what the interference meter saw.
    auto const part = [&](char const* name, void (*run)(options const&, json_writer&)) {
        if (!o.parts.count(name))
            return;
        interference_meter const m;
        json.key(name).begin_object();
        run(o, json);
        auto const seen_by_meter = m.report(name);
        json.key("wall_seconds").value(seen_by_meter.wall_seconds);
        json.key("other_cpu_seconds").value(seen_by_meter.other_cpu_seconds).end_object();
    };
    part("fib", &fib_part);
    part("tasks", &tasks_part);
    part("latency", &latency_part);
    json.key("load_average_end").value(load_average()).end_object();
    if (!o.json_path.empty() && !write_json_file(o.json_path, json))
        return 1;
    return 0;
}
