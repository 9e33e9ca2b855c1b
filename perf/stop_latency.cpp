// How soon a stop request ends a running parallel_for
// (docs/performance-algorithms.md#cancellation), and what carrying a std::stop_token costs a loop
// that is never stopped.
//
//   stop_latency [--rounds 21] [--workers 1,2,4] [--n 100000000]
//
// latency  A parallel_for over n cheap iterations (about 1 ns each) is stopped by another thread
//          at a random moment 5-50 ms after it began; measured from just before request_stop()
//          to the moment the call has thrown fj::operation_cancelled. Adaptive chunks (8-64 us)
//          and a fixed grain of 2^20 iterations (about 1 ms a chunk), which shows the "plus one
//          chunk" term.
// cost     The same loop run to the end with a token that is never stopped and without one;
//          paired rounds, order alternating.
#include "driver_cli.hpp"
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_perf::clock_type;

struct options {
    int rounds = 21;
    std::size_t n = 100'000'000;
    std::vector<int> workers{1, 2, 4};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("stop_latency", "[--rounds 21] [--workers 1,2,4] [--n 100000000]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--n") {
            o.n = static_cast<std::size_t>(cli.integer(value, 1000, name));
        } else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

// About 1 ns: the compiler must compute i * i but may not drop it.
inline void cheap_body(std::size_t i) {
    std::size_t x = i * i;
    asm volatile("" : : "r"(x));
}

double ms_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// One stopped loop: the request-to-return time in ms (negative if the loop ended first).
double stopped_loop_ms(fj::scheduler& pool, std::size_t n, std::size_t grain, int delay_us) {
    std::stop_source source;
    clock_type::time_point requested;
    std::thread requester([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
        requested = clock_type::now();
        source.request_stop();
    });
    bool cancelled = false;
    try {
        if (grain == 0)
            fj::parallel_for(pool, std::size_t{0}, n, cheap_body, source.get_token());
        else
            fj::parallel_for(pool, std::size_t{0}, n, cheap_body, source.get_token(),
                             fj::grain{grain});
    } catch (const fj::operation_cancelled&) {
        cancelled = true;
    }
    const clock_type::time_point returned = clock_type::now();
    requester.join();
    return cancelled ? ms_between(requested, returned) : -1.0;
}

void print_row(const char* what, int workers, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double p90 = v[std::min(v.size() - 1, (v.size() * 9) / 10)];
    std::printf("  %-28s %7d %10.3f %10.3f %10.3f %10.3f\n", what, workers, fj_perf::median(v),
                v.front(), p90, v.back());
}

void latency(const options& o) {
    std::printf("\nlatency: stop request to the loop's return, ms over %d rounds (n = %zu)\n",
                o.rounds, o.n);
    std::printf("  %-28s %7s %10s %10s %10s %10s\n", "", "workers", "median", "min", "p90", "max");
    std::mt19937 random(12345);
    std::uniform_int_distribution<int> delay(5'000, 50'000);
    for (const int w : o.workers) {
        fj::scheduler pool(static_cast<std::size_t>(w));
        std::vector<double> adaptive, fixed;
        int finished_first = 0;
        for (int r = 0; r < o.rounds; ++r) {
            for (const std::size_t grain : {std::size_t{0}, std::size_t{1} << 20}) {
                const double ms = stopped_loop_ms(pool, o.n, grain, delay(random));
                if (ms < 0)
                    ++finished_first;
                else
                    (grain == 0 ? adaptive : fixed).push_back(ms);
            }
        }
        if (!adaptive.empty())
            print_row("adaptive chunks", w, adaptive);
        if (!fixed.empty())
            print_row("fj::grain{2^20}", w, fixed);
        if (finished_first != 0)
            std::printf("  (%d loops ended before their request: not counted; lower --n?)\n",
                        finished_first);
    }
}

void cost(const options& o) {
    std::printf("\ncost: the whole loop, never stopped, with a token / without; %d paired rounds\n",
                o.rounds);
    std::printf("  %7s %12s %12s %8s %8s %8s\n", "workers", "without ms", "with ms", "ratio", "min",
                "max");
    for (const int w : o.workers) {
        fj::scheduler pool(static_cast<std::size_t>(w));
        std::stop_source source; // never stopped
        std::vector<double> without, with, ratio;
        for (int r = 0; r < o.rounds; ++r) {
            const auto plain = [&] { fj::parallel_for(pool, std::size_t{0}, o.n, cheap_body); };
            const auto token = [&] {
                fj::parallel_for(pool, std::size_t{0}, o.n, cheap_body, source.get_token());
            };
            double a = 0, b = 0;
            if (r % 2 == 0) {
                a = fj_perf::seconds_of(plain);
                b = fj_perf::seconds_of(token);
            } else {
                b = fj_perf::seconds_of(token);
                a = fj_perf::seconds_of(plain);
            }
            without.push_back(a * 1e3);
            with.push_back(b * 1e3);
            ratio.push_back(b / a);
        }
        std::sort(ratio.begin(), ratio.end());
        std::printf("  %7d %12.2f %12.2f %8.3f %8.3f %8.3f\n", w, fj_perf::median(without),
                    fj_perf::median(with), fj_perf::median(ratio), ratio.front(), ratio.back());
    }
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("stop_latency: load %s\n", fj_perf::load_average().c_str());
    latency(o);
    cost(o);
    std::printf("\nload after: %s\n", fj_perf::load_average().c_str());
}
