// forkjoin against oneTBB when the pool has more workers than CPUs to run them on
// (docs/performance.md#confined). Meant to run under taskset, which confines the whole process:
//
//   taskset -c 0 confined_bench                    # P workers on one CPU
//   taskset -c 0,1 confined_bench --workers 1,2    # with `taskset -c 1 yes > /dev/null` beside it
//
//   confined_bench [--rounds 7] [--workers 1,2,4,8] [--only seismic,fib_join,fib_future]
//                  [--frames 150] [--rows 400] [--row-work 3000] [--fib 30] [--fib-future 27]
//                  [--runtimes fj,tbb] [--json FILE]
//
// Three workloads (confined_workloads.hpp), each on forkjoin and on every registered competitor
// (oneTBB when found) at every worker count P. Every pool is made once; each round times every
// (runtime, P) once, in an order that rotates by one from round to round, so a disturbance hits
// all of them alike. Reported per row: the median time, the per-round ratio to the same runtime at
// P = 1 (median and range: the cost of the extra workers; 1.00 is ideal on one CPU) and the
// per-round ratio forkjoin / competitor at the same P (< 1: forkjoin faster).
#include "confined_workloads.hpp"
#include "driver_cli.hpp"
#include "json_writer.hpp"
#include "measure.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sched.h>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using namespace fj_perf::confined;

long fj_fib_join(int n) {
    if (n < 2)
        return n;
    auto [a, b] = fj::join([&] { return fj_fib_join(n - 1); }, [&] { return fj_fib_join(n - 2); });
    return a + b;
}

long fj_fib_future(int n) {
    if (n < 2)
        return n;
    fj::future<long> a = fj::fork([n] { return fj_fib_future(n - 1); });
    const long b = fj_fib_future(n - 2);
    return a.get() + b;
}

class fj_runner final : public confined_runner {
public:
    explicit fj_runner(int workers) : m_pool(static_cast<std::size_t>(workers)) {}

    std::uint64_t seismic(const seismic_size& s) override {
        std::vector<std::uint64_t> prev = seismic_initial(s.rows), next(prev.size());
        m_pool.execute([&] {
            for (int f = 0; f < s.frames; ++f) {
                fj::parallel_for(std::size_t{0}, prev.size(),
                                 [&](std::size_t r) { seismic_step(prev, next, r, s.row_work); });
                prev.swap(next);
            }
        });
        return seismic_checksum(prev);
    }
    long fib_join(int n) override {
        return m_pool.execute([&] { return fj_fib_join(n); });
    }
    long fib_future(int n) override {
        return m_pool.execute([&] { return fj_fib_future(n); });
    }

private:
    fj::scheduler m_pool;
};

const confined_registrar reg{{"fj", [](int workers) -> std::unique_ptr<confined_runner> {
                                  return std::make_unique<fj_runner>(workers);
                              }}};

struct options {
    int rounds = 7;
    std::vector<int> workers{1, 2, 4, 8};
    std::vector<std::string> only{"seismic", "fib_join", "fib_future"};
    seismic_size size;
    int fib = 30;
    int fib_future = 27;
    std::vector<std::string> runtimes; // empty: all registered
    std::string json;
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("confined_bench",
                                  "[--rounds 7] [--workers 1,2,4,8] "
                                  "[--only seismic,fib_join,fib_future] [--frames 150] "
                                  "[--rows 400] [--row-work 3000] [--fib 30] [--fib-future 27] "
                                  "[--runtimes fj,tbb] [--json FILE]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else if (name == "--only") {
            o.only = fj_perf::split(value);
            for (const auto& w : o.only)
                if (w != "seismic" && w != "fib_join" && w != "fib_future")
                    cli.fail("unknown workload " + w);
        } else if (name == "--frames") {
            o.size.frames = cli.integer(value, 1, name);
        } else if (name == "--rows") {
            o.size.rows = cli.integer(value, 1, name);
        } else if (name == "--row-work") {
            o.size.row_work = cli.integer(value, 0, name);
        } else if (name == "--fib") {
            o.fib = cli.integer(value, 2, name);
        } else if (name == "--fib-future") {
            o.fib_future = cli.integer(value, 2, name);
        } else if (name == "--runtimes") {
            o.runtimes = fj_perf::split(value);
        } else if (name == "--json") {
            o.json = value;
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

struct variant {
    std::string runtime;
    int workers;
    std::unique_ptr<confined_runner> runner;
    std::vector<double> ms; // one per round
};

// Median, min and max of a[i] / b[i].
struct ratio_summary {
    double median, lo, hi;
};
ratio_summary paired(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> r;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        r.push_back(a[i] / b[i]);
    return {fj_perf::median(r), *std::min_element(r.begin(), r.end()),
            *std::max_element(r.begin(), r.end())};
}

std::string show(const ratio_summary& s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f [%.2f-%.2f]", s.median, s.lo, s.hi);
    return buf;
}

int affinity_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("confined_bench: %d CPU(s) in the affinity mask, %d rounds, load average %s\n",
                affinity_count(), o.rounds, fj_perf::load_average().c_str());
    std::vector<variant> variants;
    for (const auto& c : confined_competitors())
        if (o.runtimes.empty() ||
            std::find(o.runtimes.begin(), o.runtimes.end(), c.name) != o.runtimes.end())
            for (const int w : o.workers)
                variants.push_back({c.name, w, c.make(w), {}});

    fj_perf::json_writer json;
    json.begin_object().key("load_before").value(fj_perf::load_average());
    json.key("cpus").value(affinity_count()).key("workloads").begin_array();
    for (const std::string& workload : o.only) {
        std::uint64_t expected = 0;
        double serial_ms = 0;
        std::string what;
        if (workload == "seismic") {
            serial_ms = fj_perf::seconds_of([&] { expected = seismic_serial(o.size); }) * 1e3;
            what = std::to_string(o.size.frames) + " frames x " + std::to_string(o.size.rows) +
                   " rows, row work " + std::to_string(o.size.row_work);
        } else {
            const int n = workload == "fib_join" ? o.fib : o.fib_future;
            serial_ms = fj_perf::seconds_of([&] { expected = fib_serial(n); }) * 1e3;
            what = "n = " + std::to_string(n);
        }
        auto run = [&](confined_runner& r) -> std::uint64_t {
            if (workload == "seismic")
                return r.seismic(o.size);
            if (workload == "fib_join")
                return static_cast<std::uint64_t>(r.fib_join(o.fib));
            return static_cast<std::uint64_t>(r.fib_future(o.fib_future));
        };
        const fj_perf::interference_meter meter;
        for (auto& v : variants) {
            v.ms.clear();
            v.runner->before_run();
            run(*v.runner); // warm-up, untimed: threads started, memory touched
            v.runner->after_run();
        }
        for (int round = 0; round < o.rounds; ++round) {
            for (std::size_t k = 0; k < variants.size(); ++k) {
                variant& v = variants[(k + static_cast<std::size_t>(round)) % variants.size()];
                v.runner->before_run();
                std::uint64_t got = 0;
                v.ms.push_back(fj_perf::seconds_of([&] { got = run(*v.runner); }) * 1e3);
                v.runner->after_run();
                if (got != expected) {
                    std::fprintf(stderr, "%s P=%d: %s gave %llu, expected %llu\n",
                                 v.runtime.c_str(), v.workers, workload.c_str(),
                                 static_cast<unsigned long long>(got),
                                 static_cast<unsigned long long>(expected));
                    return 1;
                }
            }
        }
        std::printf("\n%s (%s): serial %.1f ms\n", workload.c_str(), what.c_str(), serial_ms);
        std::printf("  %-6s %3s %10s  %-20s %-20s\n", "", "P", "median ms", "time / P=1",
                    "fj / other at same P");
        json.begin_object().key("name").value(workload).key("serial_ms").value(serial_ms);
        json.key("variants").begin_array();
        std::map<std::pair<std::string, int>, const variant*> by;
        for (const auto& v : variants)
            by[{v.runtime, v.workers}] = &v;
        for (const auto& v : variants) {
            const variant* one = by.count({v.runtime, 1}) ? by[{v.runtime, 1}] : nullptr;
            std::string vs_one = one != nullptr ? show(paired(v.ms, one->ms)) : "-";
            std::string vs_other;
            if (v.runtime == "fj")
                for (const auto& w : variants)
                    if (w.runtime != "fj" && w.workers == v.workers)
                        vs_other += w.runtime + " " + show(paired(v.ms, w.ms));
            std::printf("  %-6s %3d %10.1f  %-20s %s\n", v.runtime.c_str(), v.workers,
                        fj_perf::median(v.ms), vs_one.c_str(), vs_other.c_str());
            json.begin_object().key("runtime").value(v.runtime).key("workers").value(v.workers);
            json.key("ms").begin_array();
            for (double t : v.ms)
                json.value(t);
            json.end_array().end_object();
        }
        json.end_array().end_object();
        meter.report(workload);
    }
    json.end_array().key("load_after").value(fj_perf::load_average()).end_object();
    if (!o.json.empty())
        fj_perf::write_json_file(o.json, json);
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
}
