// The same two programs written with std::async and with fj::async (+ then, when_all), timed.
//
//   (a) flat: launch N small tasks, collect their futures, add up the results. std::async with
//       launch::async starts one OS thread per task; fj::async queues a task for a fixed pool.
//   (b) recursive: sum an array by splitting it in two down to `depth` levels, each level
//       launching its left half asynchronously and waiting for it. With std::async every waiting
//       parent holds a blocked thread, so 2^depth threads exist at once; past the system's limit
//       std::async throws std::system_error. fj's get() runs other tasks while it waits, so the
//       pool never grows.
//
// Usage: async_vs_std [--tasks N=10000] [--depth D=12] [--workers W]
// Prints the times and the ratio; exits 1 if the two versions disagree.
#include "cli.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <numeric>
#include <string>
#include <system_error>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

// A small piece of work (a few microseconds): the number of primes in a block of 16 numbers.
long small_work(long i) {
    long primes = 0;
    for (long n = i * 16; n < (i + 1) * 16; ++n) {
        bool prime = n >= 2;
        for (long d = 2; d * d <= n && prime; ++d)
            prime = n % d != 0;
        primes += prime;
    }
    return primes;
}

// --- (a) flat -----------------------------------------------------------------------------------

long flat_std(long tasks) {
    std::vector<std::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(tasks));
    for (long i = 0; i < tasks; ++i)
        futures.push_back(std::async(std::launch::async, small_work, i));
    long total = 0;
    for (auto& f : futures)
        total += f.get();
    return total;
}

long flat_fj(fj::scheduler& pool, long tasks) {
    std::vector<fj::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(tasks));
    for (long i = 0; i < tasks; ++i)
        futures.push_back(fj::async(pool, [i] { return small_work(i); }));
    // One continuation adds everything up once all are ready; nobody waits on each future.
    return fj::when_all(std::move(futures))
        .then([](std::vector<fj::future<long>> done) {
            long total = 0;
            for (auto& f : done)
                total += f.get();
            return total;
        })
        .get();
}

// --- (b) recursive ------------------------------------------------------------------------------

long sum_std(const long* data, std::size_t n, int depth) {
    if (depth == 0)
        return std::accumulate(data, data + n, 0L);
    auto left = std::async(std::launch::async, sum_std, data, n / 2, depth - 1);
    const long right = sum_std(data + n / 2, n - n / 2, depth - 1);
    return left.get() + right; // this thread blocks until the left half's thread is done
}

long sum_fj(const long* data, std::size_t n, int depth) {
    if (depth == 0)
        return std::accumulate(data, data + n, 0L);
    auto left = fj::async([=] { return sum_fj(data, n / 2, depth - 1); });
    const long right = sum_fj(data + n / 2, n - n / 2, depth - 1);
    return left.get() + right; // runs other tasks (often `left` itself) while waiting
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"async_vs_std", "async_vs_std [--tasks N] [--depth D] [--workers W]"};
    long tasks = 10000, depth = 12, workers = 0;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--tasks") == 0 && has_value)
            tasks = cli::parse<long>(argv[++i], 1, 10'000'000, "--tasks");
        else if (std::strcmp(argv[i], "--depth") == 0 && has_value)
            depth = cli::parse<long>(argv[++i], 0, 20, "--depth");
        else if (std::strcmp(argv[i], "--workers") == 0 && has_value)
            workers = cli::parse<long>(
                argv[++i], 1, static_cast<long>(fj::scheduler_options::max_workers), "--workers");
        else
            cli::usage(std::string("unknown or incomplete option '") + argv[i] + "'");
    }
    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(static_cast<std::size_t>(workers));
    fj::scheduler& pool = own ? *own : fj::default_scheduler();
    bool ok = true;

    // (a)
    long expected = 0;
    for (long i = 0; i < tasks; ++i)
        expected += small_work(i);
    long with_std = 0, with_fj = 0;
    const double t_std = cli::seconds([&] { with_std = flat_std(tasks); });
    const double t_fj = cli::seconds([&] { with_fj = flat_fj(pool, tasks); });
    std::printf("(a) %ld small tasks, results %s\n", tasks,
                with_std == expected && with_fj == expected ? "agree" : "DIFFER");
    ok = ok && with_std == expected && with_fj == expected;
    std::printf("    std::async(launch::async)   %8.3f ms  %7.2f us/task (one thread per task)\n",
                t_std * 1e3, t_std * 1e6 / static_cast<double>(tasks));
    std::printf("    fj::async + when_all + then %8.3f ms  %7.2f us/task (%zu workers)  "
                "%.1fx faster\n",
                t_fj * 1e3, t_fj * 1e6 / static_cast<double>(tasks), pool.worker_count(),
                t_std / t_fj);

    // (b)
    std::vector<long> data(std::size_t{1} << 22);
    std::iota(data.begin(), data.end(), 0L);
    const long total = std::accumulate(data.begin(), data.end(), 0L);
    const int d = static_cast<int>(depth);
    std::printf("(b) recursive sum, %d levels: %ld tasks, each parent waiting for its child\n", d,
                (1L << d) - 1);
    long fj_sum = 0;
    const double t_fj_rec = cli::seconds(
        [&] { fj_sum = pool.submit([&] { return sum_fj(data.data(), data.size(), d); }).get(); });
    try {
        long std_sum = 0;
        const double t_std_rec =
            cli::seconds([&] { std_sum = sum_std(data.data(), data.size(), d); });
        std::printf("    std::async  %8.3f ms  (%ld threads alive at the peak)%s\n",
                    t_std_rec * 1e3, (1L << d) - 1, std_sum == total ? "" : "  WRONG SUM");
        ok = ok && std_sum == total;
    } catch (const std::system_error& e) {
        std::printf("    std::async  FAILED: %s (the system refused another thread)\n", e.what());
    }
    std::printf("    fj::async   %8.3f ms  (%zu threads, however deep)%s\n", t_fj_rec * 1e3,
                pool.worker_count(), fj_sum == total ? "" : "  WRONG SUM");
    ok = ok && fj_sum == total;
    std::printf(ok ? "results agree\n" : "MISMATCH\n");
    return ok ? 0 : 1;
}
