// Parallel merge sort on forkjoin, checked against std::sort.
//
//   sort:  split in halves, sort both with fj::join, merge. Below sort_cutoff elements, std::sort.
//   merge: parallel too, else the last merge alone (a full pass over n) would be serial: split
//          the larger run at its midpoint, binary-search that value in the other run, and merge
//          the two pairs of pieces with fj::join. Below merge_cutoff elements, a serial
//          branch-free merge.
//   The two buffers swap roles at each level (ping-pong), so no level copies back.
//
// Usage: merge_sort [n=10000000] [--workers W]
//   --workers W  run on a scheduler of W workers; default: the default scheduler
//                (FJ_WORKERS, else one worker per CPU in the affinity mask).
// Sorts n random integers (fixed seed) and prints the times of std::sort, of the same merge sort
// run serially, and of the parallel merge sort with its speed-ups over both, and the statistics.
#include "cli.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using value = std::int32_t;

// Below these sizes a task costs more than it can save; large enough that the serial leaves
// dominate, small enough that there are many more leaves than workers to balance the load.
constexpr std::size_t sort_cutoff = 8192;
constexpr std::size_t merge_cutoff = 8192;

// a() and b(): in parallel with fj::join, or one after the other for the serial baseline, so
// both versions run exactly the same algorithm.
template <bool Parallel, class A, class B>
void both(A&& a, B&& b) {
    if constexpr (Parallel) {
        fj::join(a, b);
    } else {
        a();
        b();
    }
}

// The serial merge. On random input which run the next element comes from is a coin flip, so
// std::merge's branch is mispredicted about half the time; advancing both cursors by the result of
// the comparison compiles to conditional moves instead. It made the whole sort about 15% faster
// here, as fast as std::sort, which keeps the baselines honest: the parallel sort does not win by
// being compared with a slow serial one. Stable: on ties a's element goes first.
void merge_serial(const value* a, const value* a_end, const value* b, const value* b_end,
                  value* out) {
    while (a != a_end && b != b_end) {
        const bool take_b = *b < *a;
        *out++ = take_b ? *b : *a;
        b += take_b;
        a += !take_b;
    }
    std::copy(b, b_end, std::copy(a, a_end, out));
}

// Merges the sorted runs [a, a_end) and [b, b_end) into out, stably (a's elements first on ties).
template <bool Parallel>
void merge(const value* a, const value* a_end, const value* b, const value* b_end, value* out) {
    const std::size_t na = static_cast<std::size_t>(a_end - a);
    const std::size_t nb = static_cast<std::size_t>(b_end - b);
    if (na + nb <= merge_cutoff) {
        merge_serial(a, a_end, b, b_end, out);
        return;
    }
    // Split the larger run: it holds at least half of the elements, so each piece gets at most
    // about three quarters of them. It has more than merge_cutoff / 2 elements, so its midpoint
    // is not its start: both pieces are strictly smaller, and the recursion ends.
    const value *a_mid, *b_mid;
    if (na >= nb) {
        a_mid = a + na / 2;
        b_mid = std::lower_bound(b, b_end, *a_mid); // b's equals go right, after a's
    } else {
        b_mid = b + nb / 2;
        a_mid = std::upper_bound(a, a_end, *b_mid); // a's equals go left, before b's
    }
    value* out_mid = out + (a_mid - a) + (b_mid - b);
    both<Parallel>([&] { merge<Parallel>(a, a_mid, b, b_mid, out); },
                   [&] { merge<Parallel>(a_mid, a_end, b_mid, b_end, out_mid); });
}

// Sorts the n elements at src. The result ends up at dst if to_dst, else at src; the other buffer
// is scratch. Each level asks its halves for the opposite buffer, then merges back into its own:
// one pass per level and no copy (except at the leaves, in cache, when their parity asks for it).
template <bool Parallel>
void sort(value* src, value* dst, std::size_t n, bool to_dst) {
    if (n <= sort_cutoff) {
        std::sort(src, src + n);
        if (to_dst)
            std::copy(src, src + n, dst);
        return;
    }
    const std::size_t mid = n / 2;
    both<Parallel>([&] { sort<Parallel>(src, dst, mid, !to_dst); },
                   [&] { sort<Parallel>(src + mid, dst + mid, n - mid, !to_dst); });
    value* from = to_dst ? src : dst;
    value* to = to_dst ? dst : src;
    merge<Parallel>(from, from + mid, from + mid, from + n, to);
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"merge_sort", "merge_sort [n=10000000] [--workers W]"};
    int n = 10'000'000, workers = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = cli::parse<int>(
                argv[++i], 1, static_cast<int>(fj::scheduler_options::max_workers), "--workers");
        else if (argv[i][0] != '-')
            n = cli::parse<int>(argv[i], 0, 200'000'000, "n");
        else
            cli::usage((std::string("unknown option '") + argv[i] + "'").c_str());
    }

    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(static_cast<std::size_t>(workers));
    fj::scheduler& pool = own ? *own : fj::default_scheduler();

    // A fixed seed: every run sorts the same input. The conversion keeps the low 32 bits (modular
    // since C++20), so negative values occur too.
    const std::size_t size = static_cast<std::size_t>(n);
    std::vector<value> input(size);
    std::mt19937_64 rng(20240601);
    for (value& v : input)
        v = static_cast<value>(rng());

    // All buffers are allocated and written before any timing, so no run pays for page faults.
    std::vector<value> expected = input, data = input, scratch(size);
    const double t_std = cli::seconds([&] { std::sort(expected.begin(), expected.end()); });
    const double t_serial =
        cli::seconds([&] { sort<false>(data.data(), scratch.data(), size, false); });
    const bool serial_ok = data == expected;
    data = input;
    // The parallel sort runs as one task on the pool; its future is waited for from main.
    const double t_parallel = cli::seconds(
        [&] { pool.submit([&] { sort<true>(data.data(), scratch.data(), size, false); }).get(); });

    const bool parallel_ok = std::is_sorted(data.begin(), data.end()) && data == expected;
    if (!serial_ok || !parallel_ok) {
        std::printf("MISMATCH: merge_sort of %d integers differs from std::sort (%s)\n", n,
                    serial_ok     ? "parallel"
                    : parallel_ok ? "serial"
                                  : "parallel and serial");
        return 1;
    }
    std::printf("merge_sort: %d integers sorted, matches std::sort\n", n);
    std::printf("workers %zu, std::sort below %zu elements, serial merge below %zu\n",
                pool.worker_count(), sort_cutoff, merge_cutoff);
    std::printf("std::sort          %9.3f ms\n", t_std * 1e3);
    std::printf("serial merge sort  %9.3f ms\n", t_serial * 1e3);
    std::printf("parallel           %9.3f ms   speed-up over std::sort %.2fx, over serial merge "
                "sort %.2fx\n",
                t_parallel * 1e3, t_std / t_parallel, t_serial / t_parallel);
    std::cout << "statistics:\n" << pool.stats();
    return 0;
}
