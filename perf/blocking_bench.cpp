// Tasks that block (docs/performance.md#blocking): what the rescue of blocked pools costs and
// buys (docs/design/rescue.md), in one process.
//
//   blocking_bench [--rounds 11] [--workers 1,2] [--n 32] [--parts latency,sleeps,idle,fib]
//
// latency  With every worker blocked on a latch (for 5 ms already), the time from submitting a
//          task to its start: the rescue (a fresh pool per round, so no spare is left over),
//          fj::blocking (the blocked tasks declared it), and std::async's thread start.
// sleeps   8 tasks that each sleep 100 ms, on 2 workers: the rescue on, off
//          (max_spare_workers = 0), and std::async; paired rounds.
// idle     CPU used by the process in 1 s, for a pool that is idle and one whose workers all
//          block with nothing queued, the rescue on and off.
// fib      fib(n), join and seed styles, on a pool with the rescue on against one with it off:
//          what the monitor costs a busy pool; paired rounds, order alternating, per worker count.
#include "driver_cli.hpp"
#include "forkjoin_common.hpp"
#include "measure.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using namespace std::chrono_literals;
using fj_perf::clock_type;

struct options {
    int rounds = 11;
    int n = 32;
    std::vector<int> workers{1, 2};
    std::vector<std::string> parts{"latency", "sleeps", "idle", "fib"};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("blocking_bench",
                                  "[--rounds 11] [--workers 1,2] [--n 32] "
                                  "[--parts latency,sleeps,idle,fib]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--n") {
            o.n = cli.integer(value, 2, name);
        } else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else if (name == "--parts") {
            o.parts = fj_perf::split(value);
            for (const auto& p : o.parts)
                if (p != "latency" && p != "sleeps" && p != "idle" && p != "fib")
                    cli.fail("unknown part '" + p + "' (latency, sleeps, idle, fib)");
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

bool wants(const options& o, const char* part) {
    return std::find(o.parts.begin(), o.parts.end(), part) != o.parts.end();
}

fj::scheduler_options pool_options(int workers, std::size_t max_spares) {
    fj::scheduler_options so;
    so.workers = static_cast<std::size_t>(workers);
    so.max_spare_workers = max_spares;
    return so;
}

double ms_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

void print_row(const char* what, int workers, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double p90 = v[std::min(v.size() - 1, (v.size() * 9) / 10)];
    std::printf("  %-26s %7d %10.3f %10.3f %10.3f %10.3f\n", what, workers, fj_perf::median(v),
                v.front(), p90, v.back());
}

// --- latency ----------------------------------------------------------------------------------

// Submit-to-start of a task queued behind `workers` blocked tasks, on a fresh pool.
double rescue_latency_ms(int workers, bool declared) {
    fj::scheduler pool(pool_options(workers, 256));
    std::latch open(1);
    std::atomic<int> blocked{0};
    std::vector<fj::future<void>> blockers;
    for (int i = 0; i < workers; ++i)
        blockers.push_back(fj::async(pool, [&, declared] {
            blocked.fetch_add(1);
            if (declared)
                fj::blocking([&open] { open.wait(); });
            else
                open.wait();
        }));
    while (blocked.load() < workers)
        std::this_thread::yield();
    std::this_thread::sleep_for(5ms); // blocked for a while: the monitor has looked meanwhile
    clock_type::time_point started;
    const clock_type::time_point submitted = clock_type::now();
    auto probe = fj::async(pool, [&started] { started = clock_type::now(); });
    probe.get();
    open.count_down();
    for (auto& b : blockers)
        b.get();
    return ms_between(submitted, started);
}

double std_async_start_ms() {
    clock_type::time_point started;
    const clock_type::time_point submitted = clock_type::now();
    auto f = std::async(std::launch::async, [&started] { started = clock_type::now(); });
    f.get();
    return ms_between(submitted, started);
}

void latency(const options& o) {
    std::printf("\nlatency: submit to start with every worker blocked, ms over %d rounds\n",
                o.rounds);
    std::printf("  %-26s %7s %10s %10s %10s %10s\n", "", "workers", "median", "min", "p90", "max");
    for (const int w : o.workers) {
        std::vector<double> rescue, declared, std_start;
        for (int r = 0; r < o.rounds; ++r) {
            rescue.push_back(rescue_latency_ms(w, false));
            declared.push_back(rescue_latency_ms(w, true));
            std_start.push_back(std_async_start_ms());
        }
        print_row("rescue (undeclared)", w, rescue);
        print_row("fj::blocking", w, declared);
        print_row("std::async thread start", w, std_start);
    }
}

// --- sleeps -----------------------------------------------------------------------------------

double sleeps_fj_ms(fj::scheduler& pool) {
    const double s = fj_perf::seconds_of([&] {
        std::vector<fj::future<void>> v;
        for (int i = 0; i < 8; ++i)
            v.push_back(fj::async(pool, [] { std::this_thread::sleep_for(100ms); }));
        for (auto& f : v)
            f.get();
    });
    return s * 1e3;
}

double sleeps_std_ms() {
    const double s = fj_perf::seconds_of([] {
        std::vector<std::future<void>> v;
        for (int i = 0; i < 8; ++i)
            v.push_back(std::async(std::launch::async, [] { std::this_thread::sleep_for(100ms); }));
        for (auto& f : v)
            f.get();
    });
    return s * 1e3;
}

void sleeps(const options& o) {
    const int rounds = std::max(3, o.rounds / 2); // each round takes about 0.7 s
    std::printf("\nsleeps: 8 tasks sleeping 100 ms each on 2 workers, ms, %d rounds\n", rounds);
    std::vector<double> on, off, std_ms;
    for (int r = 0; r < rounds; ++r) {
        // A fresh pool per round: spares from the last round would take the sleeps at once.
        fj::scheduler rescue(pool_options(2, 256));
        fj::scheduler fixed(pool_options(2, 0));
        on.push_back(sleeps_fj_ms(rescue));
        off.push_back(sleeps_fj_ms(fixed));
        std_ms.push_back(sleeps_std_ms());
    }
    std::printf("  %-26s %7s %10s %10s %10s %10s\n", "", "workers", "median", "min", "p90", "max");
    print_row("fj, rescue on", 2, on);
    print_row("fj, rescue off", 2, off);
    print_row("std::async", 2, std_ms);
}

// --- idle -------------------------------------------------------------------------------------

// CPU seconds the process uses in `window` while `pool`'s workers do what `setup` started.
double cpu_ms_during(clock_type::duration window) {
    const double before = fj_perf::cpu_seconds();
    std::this_thread::sleep_for(window);
    return (fj_perf::cpu_seconds() - before) * 1e3;
}

void idle(const options& o) {
    std::printf("\nidle: CPU ms used by the process in 1 s (rounds: %d)\n", o.rounds / 4 + 1);
    std::printf("  %-34s %10s %10s\n", "", "rescue on", "rescue off");
    for (const int w : o.workers) {
        std::vector<double> idle_on, idle_off, blocked_on, blocked_off;
        for (int r = 0; r < o.rounds / 4 + 1; ++r) {
            for (const std::size_t spares : {std::size_t{256}, std::size_t{0}}) {
                fj::scheduler pool(pool_options(w, spares));
                fj::async(pool, [] {}).get();
                std::this_thread::sleep_for(200ms); // past the spin: every worker asleep
                (spares != 0 ? idle_on : idle_off).push_back(cpu_ms_during(1s));
                std::latch open(1);
                std::vector<fj::future<void>> blockers;
                for (int i = 0; i < w; ++i)
                    blockers.push_back(fj::async(pool, [&open] { open.wait(); }));
                std::this_thread::sleep_for(100ms);
                (spares != 0 ? blocked_on : blocked_off).push_back(cpu_ms_during(1s));
                open.count_down();
                for (auto& b : blockers)
                    b.get();
            }
        }
        std::printf("  idle pool, %d workers %*s %10.2f %10.2f\n", w, 12, "",
                    fj_perf::median(idle_on), fj_perf::median(idle_off));
        std::printf("  all blocked, nothing queued, %d w %*s %10.2f %10.2f\n", w, 0, "",
                    fj_perf::median(blocked_on), fj_perf::median(blocked_off));
    }
}

// --- fib --------------------------------------------------------------------------------------

double fib_ms(fj::scheduler& pool, bool seed, int n, long expected) {
    long result = 0;
    const double s = fj_perf::seconds_of([&] {
        result = pool.submit([&pool, seed, n] {
                         return seed ? fj_perf::fib_seed(pool, n) : fj_perf::fib_join(pool, n);
                     })
                     .get();
    });
    if (result != expected)
        throw std::runtime_error("wrong fib result: " + std::to_string(result));
    return s * 1e3;
}

void fib(const options& o) {
    const long expected = fj_perf::fib_serial(o.n);
    std::printf("\nfib(%d): rescue on / rescue off, %d paired rounds (order alternating)\n", o.n,
                o.rounds);
    std::printf("  %-6s %7s %11s %11s %9s %9s %9s\n", "style", "workers", "off ms", "on ms",
                "on/off", "min", "max");
    for (const int w : o.workers) {
        fj::scheduler on(pool_options(w, 256));
        fj::scheduler off(pool_options(w, 0));
        for (const bool seed : {false, true}) {
            const int warm = std::min(o.n, 27);
            fib_ms(on, seed, warm, fj_perf::fib_serial(warm));
            fib_ms(off, seed, warm, fj_perf::fib_serial(warm));
            std::vector<double> t_on, t_off, ratio;
            for (int r = 0; r < o.rounds; ++r) {
                double a = 0, b = 0;
                if (r % 2 == 0) {
                    a = fib_ms(off, seed, o.n, expected);
                    b = fib_ms(on, seed, o.n, expected);
                } else {
                    b = fib_ms(on, seed, o.n, expected);
                    a = fib_ms(off, seed, o.n, expected);
                }
                t_off.push_back(a);
                t_on.push_back(b);
                ratio.push_back(b / a);
            }
            std::printf("  %-6s %7d %11.1f %11.1f %9.3f %9.3f %9.3f\n", seed ? "seed" : "join", w,
                        fj_perf::median(t_off), fj_perf::median(t_on), fj_perf::median(ratio),
                        *std::min_element(ratio.begin(), ratio.end()),
                        *std::max_element(ratio.begin(), ratio.end()));
        }
        std::printf("  (spares started on the rescue pool: %llu)\n",
                    static_cast<unsigned long long>(on.stats().spares_started));
    }
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("blocking_bench: load average %s, %u CPUs online\n",
                fj_perf::load_average().c_str(), std::thread::hardware_concurrency());
    if (wants(o, "latency"))
        latency(o);
    if (wants(o, "sleeps"))
        sleeps(o);
    if (wants(o, "idle"))
        idle(o);
    if (wants(o, "fib"))
        fib(o);
    std::printf("\nload average after: %s\n", fj_perf::load_average().c_str());
}
