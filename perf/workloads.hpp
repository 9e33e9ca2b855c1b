// Workloads shared by every perf driver and every competitor (docs: style.md practice 13):
// the sizes, the serial references, the fork-count formula and the result check. A competitor
// file includes this header and implements the same workload; a driver times it and calls
// check_*() on every run, so a fast wrong answer can never be reported.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fj_perf {

// ---- Sizes ---------------------------------------------------------------------------------

inline constexpr int k_overhead_n_first = 30; // overhead driver default: fib(30) .. fib(35)
inline constexpr int k_overhead_n_last = 35;
inline constexpr int k_overhead_reps = 5;    // median of this many interleaved rounds
inline constexpr int k_bench_n[] = {25, 30}; // fib_bench sizes
inline constexpr int k_workers[] = {1, 2};   // this machine has 2 cores

inline constexpr long k_tiny_tasks = 1'000'000; // throughput of tiny submitted tasks
inline constexpr long k_async_tasks = 10'000;   // std::async starts a thread per task: fewer
inline constexpr int k_latency_samples = 1000;  // submit-to-start latency samples
inline constexpr std::chrono::microseconds k_latency_gap{1000}; // idle time before each submit

// ---- Keeping the optimizer honest ----------------------------------------------------------

// An empty asm that claims to read and modify `v`: the compiler must materialise the value and
// may assume nothing about it afterwards. It emits no instruction.
template <class T>
[[gnu::always_inline]] inline void opaque(T& v) {
    asm volatile("" : "+r"(v));
}

// ---- fib -----------------------------------------------------------------------------------

// The exact answer, for checking (iterative, O(n)).
constexpr long fib_exact(int n) {
    long a = 0;
    long b = 1;
    for (int i = 0; i < n; ++i) {
        long c = a + b;
        a = b;
        b = c;
    }
    return a;
}

// The serial reference: the same call tree as the parallel versions, one real call per node.
//
// Why the attributes: g++ -O2 turns the naive `return fib(n - 1) + fib(n - 2);` into a loop
// with an accumulator (tail-recursion elimination of the second call), which halves the calls
// and makes "serial" ~2x faster than any version that must fork both children (measured on
// this machine: 1.1 vs 2.2 ns per node). `noinline` stops self-inlining; laundering the second
// result through opaque() takes that call out of tail position, so both calls stay real. We do
// not use a volatile function pointer (adds an indirect call, ~2.2 -> ~3.5 ns per node) nor
// benchmark::DoNotOptimize (the overhead driver does not link Google Benchmark).
[[gnu::noinline]] inline long fib_serial(int n) {
    if (n < 2)
        return n;
    long a = fib_serial(n - 1);
    long b = fib_serial(n - 2);
    opaque(b);
    return a + b;
}

// The cutoff rule every parallel competitor follows:
//   if (n < 2) return n;
//   if (n < cutoff) return fib_serial(n);
//   fork fib(n - 1), run fib(n - 2), join.
// cutoff <= 2 means "fork at every internal node" (the seed style).
//
// forks(n, cutoff) = number of nodes that fork = nodes with n >= max(cutoff, 2):
//   F(n) = 0                      if n < max(cutoff, 2)
//   F(n) = 1 + F(n - 1) + F(n - 2) otherwise.
// Without a cutoff these are the internal nodes of the call tree: F(n) = fib(n + 1) - 1
// (all 2 fib(n + 1) - 1 nodes minus the fib(n + 1) leaves).
constexpr long fork_count(int n, int cutoff = 0) {
    int const lo = cutoff > 2 ? cutoff : 2;
    long f2 = 0; // F(m - 2)
    long f1 = 0; // F(m - 1)
    for (int m = 0; m <= n; ++m) {
        long f = m < lo ? 0 : 1 + f1 + f2;
        f2 = f1;
        f1 = f;
    }
    return f1;
}
static_assert(fork_count(1) == 0 && fork_count(2) == 1 && fork_count(3) == 2);
static_assert(fork_count(30) == fib_exact(31) - 1);
static_assert(fork_count(20, 20) == 1 && fork_count(21, 20) == 2 && fork_count(19, 20) == 0);

// ---- Result checks -------------------------------------------------------------------------

// Aborts with a message naming the culprit: a benchmark that computed a wrong answer is a bug,
// not a data point.
inline void check_result(std::string_view who, std::string_view what, long got, long expected) {
    if (got == expected)
        return;
    std::fprintf(stderr, "perf: WRONG RESULT from %.*s (%.*s): got %ld, expected %ld\n",
                 static_cast<int>(who.size()), who.data(), static_cast<int>(what.size()),
                 what.data(), got, expected);
    std::abort();
}

inline void check_fib(std::string_view who, int n, long got) {
    check_result(who, "fib", got, fib_exact(n));
}

// Tiny tasks: task i produces (i & 1023); the sum over count tasks is known in closed form.
inline long tiny_task_value(long i) {
    return i & 1023;
}
constexpr long tiny_task_sum(long count) {
    long const full = count / 1024;
    long const rest = count % 1024;
    return full * (1023L * 1024 / 2) + rest * (rest - 1) / 2;
}
static_assert(tiny_task_sum(1024) == 1023L * 1024 / 2 && tiny_task_sum(3) == 3);

} // namespace fj_perf
