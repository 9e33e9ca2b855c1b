// The divide-and-conquer workloads of the `loops` driver (examples/merge_sort.cpp and
// examples/nqueens.cpp, rewritten once over a `Join` policy so every runtime runs the same
// algorithm): `join(a, b)` runs the callables a and b, possibly in parallel, and returns when both
// are done. Each competitor file supplies its join (fj::join, tbb::parallel_invoke, an OpenMP task
// and taskwait); the serial row uses serial_join.
//
//   merge_sort  sort N random 32-bit integers (fixed seed): halves sorted with join, then a merge
//               that is itself split with join; std::sort and a branch-free serial merge below
//               8192 elements. Checked: equal to std::sort's result.
//   nqueens     count the placements of N non-attacking queens: one branch per free column in the
//               first 4 rows (a balanced join tree over the set of columns), serial below.
//               Checked: the known count (OEIS A000170).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace fj_perf {

inline constexpr std::uint64_t k_sort_n = 10'000'000; // merge_sort: keys
inline constexpr std::uint64_t k_queens_n = 14;       // nqueens: board size

struct serial_join {
    template <class A, class B>
    void operator()(A&& a, B&& b) const {
        a();
        b();
    }
};

// ---- merge_sort -----------------------------------------------------------------------------

using sort_key = std::int32_t;

// Below these sizes a branch costs more than it can save (the example's values).
inline constexpr std::size_t k_sort_cutoff = 8192;
inline constexpr std::size_t k_merge_cutoff = 8192;

// The input of every run: n keys from a fixed seed (negative values too).
inline std::vector<sort_key> sort_input(std::uint64_t n) {
    std::vector<sort_key> keys(static_cast<std::size_t>(n));
    std::mt19937_64 rng(20240601);
    for (sort_key& k : keys)
        k = static_cast<sort_key>(rng());
    return keys;
}

// Branch-free (the comparison's result advances the cursors, no mispredicted branch), stable.
inline void merge_serial(sort_key const* a, sort_key const* a_end, sort_key const* b,
                         sort_key const* b_end, sort_key* out) {
    while (a != a_end && b != b_end) {
        bool const take_b = *b < *a;
        *out++ = take_b ? *b : *a;
        b += take_b;
        a += !take_b;
    }
    std::copy(b, b_end, std::copy(a, a_end, out));
}

// Merges [a, a_end) and [b, b_end) into out: split the larger run at its midpoint, binary-search
// that value in the other run, merge the two pairs of pieces with join.
template <class Join>
void merge_runs(Join const& join, sort_key const* a, sort_key const* a_end, sort_key const* b,
                sort_key const* b_end, sort_key* out) {
    auto const na = static_cast<std::size_t>(a_end - a);
    auto const nb = static_cast<std::size_t>(b_end - b);
    if (na + nb <= k_merge_cutoff) {
        merge_serial(a, a_end, b, b_end, out);
        return;
    }
    sort_key const* a_mid = nullptr;
    sort_key const* b_mid = nullptr;
    if (na >= nb) {
        a_mid = a + na / 2;
        b_mid = std::lower_bound(b, b_end, *a_mid);
    } else {
        b_mid = b + nb / 2;
        a_mid = std::upper_bound(a, a_end, *b_mid);
    }
    sort_key* const out_mid = out + (a_mid - a) + (b_mid - b);
    join([&] { merge_runs(join, a, a_mid, b, b_mid, out); },
         [&] { merge_runs(join, a_mid, a_end, b_mid, b_end, out_mid); });
}

// Sorts the n keys at src into src (to_dst false) or dst (to_dst true); the other buffer is
// scratch. The buffers swap roles at each level, so no level copies back.
template <class Join>
void merge_sort(Join const& join, sort_key* src, sort_key* dst, std::size_t n, bool to_dst) {
    if (n <= k_sort_cutoff) {
        std::sort(src, src + n);
        if (to_dst)
            std::copy(src, src + n, dst);
        return;
    }
    std::size_t const mid = n / 2;
    join([&] { merge_sort(join, src, dst, mid, !to_dst); },
         [&] { merge_sort(join, src + mid, dst + mid, n - mid, !to_dst); });
    sort_key* const from = to_dst ? src : dst;
    sort_key* const to = to_dst ? dst : src;
    merge_runs(join, from, from + mid, from + mid, from + n, to);
}

// ---- nqueens --------------------------------------------------------------------------------

inline constexpr int k_queens_cutoff = 4; // branch in the first 4 rows, serial below
inline constexpr int k_queens_max = 18;
inline constexpr long k_queens_known[k_queens_max + 1] = {
    1,   1,    0,     0,     2,      10,      4,        40,       92,       352,
    724, 2680, 14200, 73712, 365596, 2279184, 14772512, 95815104, 666090624};

// A partial placement: `left` and `right` are the squares of the next row attacked along the two
// diagonals, so the free squares are all & ~(cols | left | right).
struct board {
    std::uint32_t all;
    std::uint32_t cols;
    std::uint32_t left;
    std::uint32_t right;
    int row;

    static board empty(int n) { return {(std::uint32_t{1} << n) - 1, 0, 0, 0, 0}; }
    std::uint32_t free_squares() const { return all & ~(cols | left | right); }
    board place(std::uint32_t bit) const {
        return {all, cols | bit, (left | bit) << 1, (right | bit) >> 1, row + 1};
    }
};

inline long queens_serial(board const& b) {
    if (b.cols == b.all)
        return 1;
    long count = 0;
    for (std::uint32_t free = b.free_squares(); free != 0; free &= free - 1)
        count += queens_serial(b.place(free & -free));
    return count;
}

// The lowest half (rounded down) of the bits of `set`.
inline std::uint32_t lower_half(std::uint32_t set) {
    std::uint32_t low = 0;
    for (int k = std::popcount(set) / 2; k > 0; --k) {
        low |= set & -set;
        set &= set - 1;
    }
    return low;
}

template <class Join>
long queens(Join const& join, board const& b);

// The placements with the next queen on one of `choices`: halving the set makes a balanced join
// tree, so a thief takes half of the remaining columns at once.
template <class Join>
long queens_columns(Join const& join, board const& b, std::uint32_t choices) {
    if (choices == 0)
        return 0;
    if (std::has_single_bit(choices))
        return queens(join, b.place(choices));
    std::uint32_t const low = lower_half(choices);
    long x = 0;
    long y = 0;
    join([&] { x = queens_columns(join, b, low); },
         [&] { y = queens_columns(join, b, choices ^ low); });
    return x + y;
}

template <class Join>
long queens(Join const& join, board const& b) {
    if (b.row >= k_queens_cutoff || b.cols == b.all)
        return queens_serial(b);
    return queens_columns(join, b, b.free_squares());
}

} // namespace fj_perf
