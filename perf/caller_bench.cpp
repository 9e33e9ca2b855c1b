// Parallel calls made from main, a thread outside every pool, the way a serial program calls a
// parallel library at its hot spots: forkjoin against oneTBB and OpenMP (caller_workloads.hpp).
//
//   caller_bench [--rounds 9] [--workers 1,2] [--only join,loop,power] [--calls 20000]
//                [--iterations 1000] [--n 100000] [--cooldown-ms 10] [--max-round-ms 2000]
//
//   join   a join of two empty tasks. fj: sched.join([] {}, [] {}) on an fj::scheduler of N
//          workers; oneTBB: parallel_invoke in a task_arena(N)'s execute(); OpenMP: parallel
//          sections with num_threads(N); serial: the two lambdas called directly.
//   loop   a parallel loop over 256 iterations that each add 1 to their own slot of an array.
//          fj: fj::parallel_for(sched, 0, 256, body); oneTBB: tbb::parallel_for(0, 256, body) in
//          the arena; OpenMP: parallel for; serial: the loop, in a function of its own.
//   power  --iterations steps of a power iteration's shape over --n doubles: a parallel sum
//          (fj::parallel_reduce, tbb::parallel_reduce, reduction(+:sum)) then a parallel loop
//          that scales every element (fj::parallel_for, tbb::parallel_for, parallel for); every
//          call made from main. The sum of the sums and the final vector are checked against
//          the serial program's after as many iterations (relative 1e-9, absolute 1e-12: the
//          parallel sums add in another order): a mismatch ends the program with status 1, as
//          does a loop's mark that is not the number of loops made.
//
// The competitors' files say what their users write (competitors/tbb_caller.cpp,
// competitors/omp_caller.cpp); the forkjoin calls here are the ones a forkjoin user writes. N
// is each runtime's size: an fj::scheduler of N runs a call from main on main and at most N - 1
// of its N workers; a task_arena(N) and an OpenMP team of N count main as one of the N. For each N
// every runtime's pool is made once. Rounds are paired: each round runs every row once, the order
// rotating, with --cooldown-ms of idle time before each row so that one runtime's spinning threads
// are asleep before the next starts. A row's time in a round is the mean of --calls calls (join,
// loop) under one clock, or the whole power program divided by its iterations. A round that runs
// past --max-round-ms stops there (at a multiple of 100 calls or 10 iterations; 0: no limit), its
// time the mean of the calls it made, and the table says so: on a machine where another process
// takes a core, a runtime whose threads spin at barriers can turn a round of seconds into minutes.
// Printed per row: the median time per call and its range over the rounds; then the per-round
// ratios fj / other (median and range; < 1: forkjoin faster), and for power each runtime against
// the serial program.
#include "caller_workloads.hpp"
#include "driver_cli.hpp"
#include "measure.hpp"
#include "paired_rounds.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using namespace fj_perf::caller;

// --- forkjoin and the serial references ---------------------------------------------------------

class fj_runner final : public caller_runner {
public:
    explicit fj_runner(int workers) : m_sched(static_cast<std::size_t>(workers)) {}

    void join(int calls) override {
        for (int c = 0; c < calls; ++c)
            m_sched.join([] {}, [] {});
    }

    void loop(int calls, int* marks) override {
        for (int c = 0; c < calls; ++c)
            fj::parallel_for(m_sched, 0, k_loop_size, [&](int i) { marks[i] += 1; });
    }

    double power(std::vector<double>& x, int iterations) override {
        double total = 0;
        for (int it = 0; it < iterations; ++it) {
            const double sum = fj::parallel_reduce(
                m_sched, std::size_t{0}, x.size(), 0.0, [&](std::size_t i) { return x[i]; },
                std::plus<>{});
            fj::parallel_for(m_sched, std::size_t{0}, x.size(),
                             [&](std::size_t i) { x[i] = x[i] * k_scale + k_shift; });
            total += sum;
        }
        return total;
    }

private:
    fj::scheduler m_sched;
};

// One serial loop, not inlined into the caller's loop of calls: the compiler could otherwise
// merge the calls' additions into one.
[[gnu::noinline]] void serial_loop(int* marks) {
    for (int i = 0; i < k_loop_size; ++i)
        marks[i] += 1;
}

class serial_runner final : public caller_runner {
public:
    void join(int calls) override {
        auto a = [] {};
        auto b = [] {};
        for (int c = 0; c < calls; ++c) {
            a();
            b();
        }
    }

    void loop(int calls, int* marks) override {
        for (int c = 0; c < calls; ++c)
            serial_loop(marks);
    }

    double power(std::vector<double>& x, int iterations) override {
        double total = 0;
        for (int it = 0; it < iterations; ++it) {
            double sum = 0;
            for (const double v : x)
                sum += v;
            for (double& v : x)
                v = v * k_scale + k_shift;
            total += sum;
        }
        return total;
    }
};

// --- the driver ---------------------------------------------------------------------------------

struct options {
    int rounds = 9;
    std::vector<int> workers{1, 2};
    std::vector<std::string> only{"join", "loop", "power"};
    int calls = 20000;
    int iterations = 1000;
    int n = 100000;
    int cooldown_ms = 10;
    int max_round_ms = 2000;
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("caller_bench",
                                  "[--rounds 9] [--workers 1,2] [--only join,loop,power] "
                                  "[--calls 20000] [--iterations 1000] [--n 100000] "
                                  "[--cooldown-ms 10] [--max-round-ms 2000]",
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
                if (w != "join" && w != "loop" && w != "power")
                    cli.fail("unknown workload '" + w + "' (join, loop, power)");
        } else if (name == "--calls") {
            o.calls = cli.integer(value, 1, name);
        } else if (name == "--iterations") {
            o.iterations = cli.integer(value, 1, name);
        } else if (name == "--n") {
            o.n = cli.integer(value, 1, name);
        } else if (name == "--cooldown-ms") {
            o.cooldown_ms = cli.integer(value, 0, name);
        } else if (name == "--max-round-ms") {
            o.max_round_ms = cli.integer(value, 0, name);
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

// The rows: serial, forkjoin, then every registered competitor.
std::vector<caller_competitor> all_rows() {
    std::vector<caller_competitor> rows{
        {"serial", "the lambdas / the loop / the program called directly",
         [](int) -> std::unique_ptr<caller_runner> { return std::make_unique<serial_runner>(); }},
        {"fj",
         "fj::scheduler sched(N); sched.join / fj::parallel_for(sched, ...) / "
         "fj::parallel_reduce(sched, ...)",
         [](int workers) -> std::unique_ptr<caller_runner> {
             return std::make_unique<fj_runner>(workers);
         }}};
    const auto& registered = caller_competitors();
    rows.insert(rows.end(), registered.begin(), registered.end());
    return rows;
}

std::string ratio_of(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> r;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        r.push_back(a[i] / b[i]);
    const fj_perf::spread s = fj_perf::spread_of(r);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f (%.3f-%.3f)", s.median, s.lo, s.hi);
    return buf;
}

// fj / every other parallel row; with against_serial, also every parallel row / serial.
void print_ratios(const std::vector<std::string>& names, const std::vector<std::vector<double>>& us,
                  bool against_serial) {
    const auto fj = std::find(names.begin(), names.end(), "fj") - names.begin();
    for (std::size_t j = 0; j < names.size(); ++j)
        if (names[j] != "fj" && names[j] != "serial")
            std::printf("  %-15s = %s\n", ("fj / " + names[j]).c_str(),
                        ratio_of(us[static_cast<std::size_t>(fj)], us[j]).c_str());
    if (!against_serial)
        return;
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] != "serial")
            std::printf("  %-15s = %s\n", (names[i] + " / serial").c_str(),
                        ratio_of(us[i], us[0]).c_str());
}

bool close_to(double got, double expected, double relative) {
    return std::fabs(got - expected) <= relative * std::fabs(expected);
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
}

// A row's time in one round: `total` calls (or iterations) in chunks of `chunk`, all under one
// clock, stopping early after the chunk that ends past max_seconds (0: never). The mean per call
// is over the calls made. The cap bounds a round that a busy machine makes hundreds of times
// slower (libgomp's spinning barriers, when another process takes a core) without changing a
// normal one.
struct batch_time {
    double us_per_call = 0;
    int done = 0;
};

template <class RunChunk>
batch_time capped_batch(int total, int chunk, double max_seconds, RunChunk&& run_chunk) {
    const auto start = fj_perf::clock_type::now();
    double seconds = 0;
    int done = 0;
    while (done < total) {
        const int k = std::min(chunk, total - done);
        run_chunk(k);
        done += k;
        seconds = std::chrono::duration<double>(fj_perf::clock_type::now() - start).count();
        if (max_seconds > 0 && seconds > max_seconds)
            break;
    }
    return {seconds * 1e6 / done, done};
}

// The serial program's results after a number of power iterations, computed once per count.
class power_reference {
public:
    explicit power_reference(std::vector<double> initial) : m_initial(std::move(initial)) {}

    const std::pair<double, std::vector<double>>& after(int iterations) {
        auto it = m_cache.find(iterations);
        if (it == m_cache.end()) {
            std::vector<double> x = m_initial;
            const double total = serial_runner{}.power(x, iterations);
            it = m_cache.emplace(iterations, std::make_pair(total, std::move(x))).first;
        }
        return it->second;
    }
    const std::vector<double>& initial() const { return m_initial; }

private:
    std::vector<double> m_initial;
    std::map<int, std::pair<double, std::vector<double>>> m_cache;
};

// One workload at every worker count. false if a result was wrong.
bool run_workload(const options& o, const std::string& workload) {
    const bool power = workload == "power";
    power_reference reference(power ? power_initial(static_cast<std::size_t>(o.n))
                                    : std::vector<double>{});
    const int total = power ? o.iterations : o.calls;
    // Calls between two looks at the clock: cheap beside a call, and few calls past the cap.
    const int chunk = power ? 10 : 100;
    if (power) {
        std::printf("power: %d iterations of a sum and a scaling loop over %d doubles, all "
                    "called from main; µs per iteration (a sum and a loop)\n",
                    o.iterations, o.n);
        (void)reference.after(o.iterations);
    } else if (workload == "join") {
        std::printf("join: a join of two empty tasks from main, %d calls a round; µs per call\n",
                    o.calls);
    } else {
        std::printf("loop: a parallel loop over %d iterations (marks[i] += 1) from main, %d "
                    "calls a round; µs per call\n",
                    k_loop_size, o.calls);
    }
    const fj_perf::interference_meter meter;
    bool ok = true;
    const std::vector<caller_competitor> rows = all_rows();
    for (const int w : o.workers) {
        auto runs = fj_perf::runners_of(rows, w);
        std::vector<std::vector<double>> us(rows.size());
        std::vector<int> cut(rows.size()), fewest(rows.size(), total);
        std::vector<int> marks(k_loop_size);
        std::vector<double> x;
        // One timed batch of row i (at most `calls` calls or iterations), its result checked
        // outside the clock.
        auto batch = [&](std::size_t i, int calls, double max_seconds) {
            caller_runner& run = *runs[i];
            if (workload == "join")
                return capped_batch(calls, chunk, max_seconds, [&](int k) { run.join(k); });
            if (workload == "loop") {
                std::fill(marks.begin(), marks.end(), 0);
                const batch_time t = capped_batch(calls, chunk, max_seconds,
                                                  [&](int k) { run.loop(k, marks.data()); });
                if (std::count(marks.begin(), marks.end(), t.done) != k_loop_size) {
                    std::printf("  WRONG: %s at %d workers: a mark is not %d after %d loops\n",
                                rows[i].name.c_str(), w, t.done, t.done);
                    ok = false;
                }
                return t;
            }
            x = reference.initial();
            double sum_of_sums = 0;
            const batch_time t = capped_batch(calls, chunk, max_seconds,
                                              [&](int k) { sum_of_sums += run.power(x, k); });
            const auto& [expected_total, expected_x] = reference.after(t.done);
            if (!close_to(sum_of_sums, expected_total, 1e-9) ||
                max_difference(x, expected_x) > 1e-12) {
                std::printf("  WRONG: %s at %d workers: sum of sums %.17g (serial %.17g), vector "
                            "off by up to %.3g\n",
                            rows[i].name.c_str(), w, sum_of_sums, expected_total,
                            max_difference(x, expected_x));
                ok = false;
            }
            return t;
        };
        for (std::size_t i = 0; i < rows.size(); ++i) // warm up: threads started, memory touched
            (void)batch(i, std::min(total, power ? 10 : 1000), 0);
        for (int r = 0; r < o.rounds; ++r) {
            fj_perf::for_each_row_rotated(r, rows.size(), [&](std::size_t i) {
                fj_perf::cooldown(o.cooldown_ms);
                const batch_time t = batch(i, total, o.max_round_ms * 1e-3);
                us[i].push_back(t.us_per_call);
                if (t.done < total) {
                    ++cut[i];
                    fewest[i] = std::min(fewest[i], t.done);
                }
            });
        }
        fj_perf::print_workers_label(w);
        std::printf("%10s %19s\n", power ? "µs/iter" : "µs/call", "[range]");
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const fj_perf::spread s = fj_perf::spread_of(us[i]);
            std::printf("  %-19s %10.3f [%8.3f-%8.3f]\n", rows[i].name.c_str(), s.median, s.lo,
                        s.hi);
        }
        print_ratios(fj_perf::names_of(rows), us, power);
        for (std::size_t i = 0; i < rows.size(); ++i)
            if (cut[i] > 0)
                std::printf("  (%s: %d of %d rounds stopped at %d ms, the shortest after %d of "
                            "%d %s)\n",
                            rows[i].name.c_str(), cut[i], o.rounds, o.max_round_ms, fewest[i],
                            total, power ? "iterations" : "calls");
    }
    meter.report(workload);
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("caller_bench: %d paired rounds, workers", o.rounds);
    for (const int w : o.workers)
        std::printf(" %d", w);
    std::printf(", load average %s\n", fj_perf::load_average().c_str());
    for (const auto& row : all_rows())
        std::printf("  %-6s %s\n", row.name.c_str(), row.what.c_str());
    std::printf("\n");
    bool ok = true;
    for (const auto& workload : o.only)
        ok = run_workload(o, workload) && ok;
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
    if (!ok) {
        std::printf("caller_bench: a result differs from the serial one\n");
        return 1;
    }
}
