// fib two ways on forkjoin, checked against the serial function.
//
//   seed style: fork a child, compute the other half, reschedule_until the child is ready, get().
//   join style: fj::join(a, b), allocation-free structured fork/join.
//
// Usage: fib [n=30] [--cutoff C] [--workers W]
//   --cutoff C   below n = C recurse serially (coarse tasks); default 0: every call forks.
//   --workers W  run on a scheduler of W workers; default: the default scheduler
//                (FJ_WORKERS, else one worker per CPU in the affinity mask).
// Prints fib(n), each style's time and speed-up over the serial function, and the statistics.
#include "cli.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

// The serial reference. noinline + the empty asm keep GCC from turning the recursion into a loop,
// so it makes the same calls as the parallel versions.
__attribute__((noinline)) long fib_serial(int n) {
    if (n < 2)
        return n;
    long a = fib_serial(n - 1);
    asm volatile("" ::: "memory");
    return a + fib_serial(n - 2);
}

// Seed style, as a user of the original work-stealing pool writes it.
long fib_seed(fj::scheduler& pool, int n, int cutoff) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fib_serial(n);
    fj::future<long> child =
        pool.fork([&pool, n, cutoff] { return fib_seed(pool, n - 1, cutoff); });
    long other = fib_seed(pool, n - 2, cutoff);
    pool.reschedule_until([&] { return child.is_ready(); });
    return child.get() + other;
}

// Join style.
long fib_join(int n, int cutoff) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fib_serial(n);
    // join(a, b) runs a here and offers b to idle workers: give them the larger half.
    auto [smaller, larger] =
        fj::join([=] { return fib_join(n - 2, cutoff); }, [=] { return fib_join(n - 1, cutoff); });
    return smaller + larger;
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"fib", "fib [n=30] [--cutoff C] [--workers W]"};
    int n = 30, cutoff = 0, workers = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--cutoff") == 0 && i + 1 < argc)
            cutoff = cli::parse<int>(argv[++i], 0, 92, "--cutoff");
        else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = cli::parse<int>(
                argv[++i], 1, static_cast<int>(fj::scheduler_options::max_workers), "--workers");
        else if (argv[i][0] != '-')
            n = cli::parse<int>(argv[i], 0, 50, "n");
        else
            cli::usage((std::string("unknown option '") + argv[i] + "'").c_str());
    }

    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(static_cast<std::size_t>(workers));
    fj::scheduler& pool = own ? *own : fj::default_scheduler();

    long expected = 0, seed = 0, joined = 0;
    const double t_serial = cli::seconds([&] { expected = fib_serial(n); });
    // Both styles run as one task on the pool; the root's future is waited for from main.
    const double t_seed =
        cli::seconds([&] { seed = pool.submit([&] { return fib_seed(pool, n, cutoff); }).get(); });
    const double t_join =
        cli::seconds([&] { joined = pool.submit([&] { return fib_join(n, cutoff); }).get(); });

    if (seed != expected || joined != expected) {
        std::printf("MISMATCH: serial %ld, seed style %ld, join style %ld\n", expected, seed,
                    joined);
        return 1;
    }
    std::printf("fib(%d) = %ld\n", n, expected);
    std::printf("workers %zu, cutoff %d\n", pool.worker_count(), cutoff);
    std::printf("serial      %9.3f ms\n", t_serial * 1e3);
    std::printf("seed style  %9.3f ms   speed-up over serial %.2fx   (fork + reschedule_until)\n",
                t_seed * 1e3, t_serial / t_seed);
    std::printf("join style  %9.3f ms   speed-up over serial %.2fx   (fj::join)\n", t_join * 1e3,
                t_serial / t_join);
    std::cout << "statistics:\n" << pool.stats();
    return 0;
}
