// fib(n) by fork/join three ways, in paired rounds: serial recursion, fj::join of two lambdas, and
// fj::task coroutines joined with co_await fj::join (docs/performance.md#coroutine-tasks). Each
// round runs every row once, in an order that rotates by one from round to round; the table gives
// each row's median and range and the per-round ratios.
//
//   coroutine_fib [--n 30] [--rounds 11] [--workers 1,2]
#include "measure.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

// noinline: the compiler must not turn the serial reference into a loop it can fold.
[[gnu::noinline]] long serial_fib(int n) {
    return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

long join_fib(int n) {
    if (n < 2)
        return n;
    auto [a, b] = fj::join([n] { return join_fib(n - 1); }, [n] { return join_fib(n - 2); });
    return a + b;
}

fj::task<long> task_fib(int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await fj::join(task_fib(n - 1), task_fib(n - 2));
    co_return a + b;
}

} // namespace

int main(int argc, char** argv) {
    int n = 30;
    int rounds = 11;
    std::vector<std::string> worker_counts{"1", "2"};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--n") == 0)
            n = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--rounds") == 0)
            rounds = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--workers") == 0)
            worker_counts = fj_perf::split(argv[i + 1]);
    }
    const long expected = serial_fib(n);
    std::printf("fib(%d), %d rounds, load average %s\n", n, rounds,
                fj_perf::load_average().c_str());
    for (const std::string& w : worker_counts) {
        fj::scheduler pool(static_cast<std::size_t>(std::atoi(w.c_str())));
        const std::vector<std::string> names{"serial", "fj::join", "fj::task"};
        const std::vector<std::function<long()>> rows{
            [&] { return serial_fib(n); },
            [&] { return pool.execute([&] { return join_fib(n); }); },
            [&] { return fj::async(pool, task_fib(n)).get(); }};
        std::vector<std::vector<double>> ms(rows.size());
        for (int round = 0; round < rounds; ++round)
            for (std::size_t k = 0; k < rows.size(); ++k) {
                const std::size_t row = (k + static_cast<std::size_t>(round)) % rows.size();
                long got = 0;
                const double s = fj_perf::seconds_of([&] { got = rows[row](); });
                if (got != expected) {
                    std::fprintf(stderr, "%s: fib(%d) = %ld, expected %ld\n", names[row].c_str(), n,
                                 got, expected);
                    return 1;
                }
                ms[row].push_back(s * 1e3);
            }
        std::printf("%s worker(s):\n", w.c_str());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            std::vector<double> sorted = ms[i];
            std::sort(sorted.begin(), sorted.end());
            std::printf("  %-9s %8.2f ms (%.2f-%.2f)\n", names[i].c_str(), fj_perf::median(ms[i]),
                        sorted.front(), sorted.back());
        }
        fj_perf::print_paired_ratios(names, ms);
    }
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
    return 0;
}
