// The loop workloads of the `loops` driver (loops.cpp), shared with every loop competitor
// (competitors/*_loops.cpp): the sizes, the bodies, the serial references and the result checks.
// Every runtime calls the same body per index, so the rows differ only in how the range is split
// and scheduled.
//
//   bbp_digits  out[i] = the hex digit of pi at position i, i in [0, D). Position i costs
//               O(i log i) (examples/bbp.hpp), so the load is uneven: the upper half of the range
//               is about 3/4 of the work. Checked: equal to the serial digits.
//   bbp_series  sum of bbp::series_term(k), k in [0, N): a reduction of ~10 ns terms. Checked:
//               |sum - pi| < 1e-15.
//   empty_for   a near-empty body over [0, N), ~0.6-1.5 ns per index (see empty_body).
//               Checked: every 4096th index left its mark.
//   merge_sort, nqueens  two divide-and-conquer workloads, not loops, timed by the same driver
//               (dc_workloads.hpp).
#pragma once

#include "bbp.hpp"
#include "dc_workloads.hpp"
#include "workloads.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

namespace fj_perf {

// ---- Sizes (loops driver defaults; --digits, --terms, --n override them) --------------------

inline constexpr std::uint64_t k_loop_digits = 3500;       // bbp_digits: positions [0, D)
inline constexpr std::uint64_t k_loop_terms = 100'000'000; // bbp_series: terms [0, N)
inline constexpr std::uint64_t k_loop_n = 100'000'000;     // empty_for: indices [0, N)
inline constexpr int k_loop_reps = 5;                      // median of this many rounds
inline constexpr double k_series_tolerance = 1e-15;        // |sum - pi| must be below this

enum class loop_workload { bbp_digits, bbp_series, empty_for, merge_sort, nqueens };

inline constexpr loop_workload k_loop_workloads[] = {
    loop_workload::bbp_digits, loop_workload::bbp_series, loop_workload::empty_for,
    loop_workload::merge_sort, loop_workload::nqueens};

inline constexpr std::string_view workload_name(loop_workload w) {
    switch (w) {
    case loop_workload::bbp_digits:
        return "bbp_digits";
    case loop_workload::bbp_series:
        return "bbp_series";
    case loop_workload::empty_for:
        return "empty_for";
    case loop_workload::merge_sort:
        return "merge_sort";
    case loop_workload::nqueens:
        return "nqueens";
    }
    return "?";
}

// ---- Bodies ---------------------------------------------------------------------------------

// bbp_digits: one position per index. noinline: every runtime calls this one out-of-line copy, so
// all of them run the same machine code for the digit. Left inline, each competitor's translation
// unit compiled its own: oneTBB's and OpenMP's inlined the whole digit into their loops, forkjoin's
// and the serial one called an out-of-line bbp::frac_series, and the tables compared the inliner's
// choices along with the runtimes (docs/performance.md#loops). A call costs nanoseconds; a digit
// costs 0.3-1.2 ms.
[[gnu::noinline]] inline void bbp_digit_body(std::uint64_t i, std::uint8_t* out) {
    out[i] = static_cast<std::uint8_t>(bbp::hex_digit_of_pi(i));
}

// empty_for: the index is laundered through opaque() (an empty asm that claims to modify it), so
// the compiler must run every iteration and cannot vectorise, strength-reduce or delete the loop;
// every 4096th index stores itself into marks[i / 4096] (distinct slots: no races), which is what
// the check reads. Cost: a predictable branch and the loop itself, ~0.6-1.5 ns per index here.
inline constexpr int k_mark_shift = 12;
inline constexpr std::uint64_t k_mark_mask = (std::uint64_t{1} << k_mark_shift) - 1;

struct empty_body {
    std::uint64_t* marks;
    [[gnu::always_inline]] void operator()(std::uint64_t i) const {
        std::uint64_t v = i;
        opaque(v);
        if ((v & k_mark_mask) == 0)
            marks[v >> k_mark_shift] = v;
    }
};

inline std::size_t mark_count(std::uint64_t n) {
    return static_cast<std::size_t>((n + k_mark_mask) >> k_mark_shift);
}

// What one run reads and writes. The driver allocates the buffers and resets them (untimed)
// before every run; a competitor fills them (or returns the sum) and the driver checks.
struct loop_io {
    std::uint64_t n = 0;            // positions, terms, indices, keys, or the board size
    std::uint8_t* digits = nullptr; // bbp_digits: n digits
    std::uint64_t* marks = nullptr; // empty_for: mark_count(n) slots
    sort_key* keys = nullptr;       // merge_sort: n keys, sorted in place
    sort_key* scratch = nullptr;    // merge_sort: n keys of scratch space
};

// ---- Serial references ----------------------------------------------------------------------

inline void bbp_digits_serial(loop_io const& io) {
    for (std::uint64_t i = 0; i < io.n; ++i)
        bbp_digit_body(i, io.digits);
}

inline double bbp_series_serial(std::uint64_t terms) {
    double sum = 0.0;
    for (std::uint64_t k = 0; k < terms; ++k)
        sum += bbp::series_term(k);
    return sum;
}

inline void empty_for_serial(loop_io const& io) {
    empty_body const body{io.marks};
    for (std::uint64_t i = 0; i < io.n; ++i)
        body(i);
}

// The same merge sort with the two halves one after the other.
inline void merge_sort_serial(loop_io const& io) {
    merge_sort(serial_join{}, io.keys, io.scratch, static_cast<std::size_t>(io.n), false);
}

// The plain search (no cutoff, no join): what the parallel search is compared with.
inline double nqueens_serial(loop_io const& io) {
    return static_cast<double>(queens_serial(board::empty(static_cast<int>(io.n))));
}

// ---- Checks (abort on a wrong answer, naming the culprit) ----------------------------------

[[noreturn]] inline void loop_wrong(std::string const& who, std::string_view what,
                                    std::string const& detail) {
    std::fprintf(stderr, "perf: WRONG RESULT from %s (%.*s): %s\n", who.c_str(),
                 static_cast<int>(what.size()), what.data(), detail.c_str());
    std::abort();
}

inline void check_digits(std::string const& who, std::vector<std::uint8_t> const& got,
                         std::vector<std::uint8_t> const& expected) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (got[i] != expected[i]) {
            loop_wrong(who, "bbp_digits",
                       "position " + std::to_string(i) + ": got " + std::to_string(got[i]) +
                           ", expected " + std::to_string(expected[i]));
        }
    }
}

inline void check_series(std::string const& who, double sum) {
    if (!(std::fabs(sum - std::numbers::pi) < k_series_tolerance)) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "sum %.17g, pi %.17g", sum, std::numbers::pi);
        loop_wrong(who, "bbp_series", buf);
    }
}

inline void check_sorted(std::string const& who, std::vector<sort_key> const& got,
                         std::vector<sort_key> const& expected) {
    if (got != expected)
        loop_wrong(who, "merge_sort", "the keys differ from std::sort's result");
}

inline void check_queens(std::string const& who, std::uint64_t n, double count) {
    long const expected = k_queens_known[n];
    if (count != static_cast<double>(expected))
        loop_wrong(who, "nqueens",
                   "got " + std::to_string(count) + ", expected " + std::to_string(expected));
}

inline void check_marks(std::string const& who, std::vector<std::uint64_t> const& marks) {
    for (std::size_t j = 0; j < marks.size(); ++j) {
        if (marks[j] != static_cast<std::uint64_t>(j) << k_mark_shift) {
            loop_wrong(who, "empty_for",
                       "index " + std::to_string(static_cast<std::uint64_t>(j) << k_mark_shift) +
                           " did not run");
        }
    }
}

} // namespace fj_perf
