// N-queens on forkjoin: count the ways to place N non-attacking queens on an N x N board, checked
// against the known counts (OEIS A000170) and against the serial search.
//
//   The board is three bitmasks: the columns taken, and the squares of the current row attacked
//   along each diagonal. In each of the first C rows the search forks one task per free column
//   (fj::join over a recursive halving of the set of free columns); from row C on it is serial.
//
// Usage: nqueens [N=12] [--cutoff C] [--workers W]
//   --cutoff C   fork in the first C rows, then search serially; default 4. 0: all serial.
//   --workers W  run on a scheduler of W workers; default: the default scheduler
//                (FJ_WORKERS, else one worker per CPU in the affinity mask).
// Prints the count, the serial and parallel times, the speed-up, and the statistics.
#include "cli.hpp"

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

// Solutions for N = 0..18 (OEIS A000170), indexed by N.
constexpr long known_counts[] = {1,      1,       0,        0,        2,        10,    4,
                                 40,     92,      352,      724,      2680,     14200, 73712,
                                 365596, 2279184, 14772512, 95815104, 666090624};
constexpr int max_n = 18;

// One partial placement: rows 0..row-1 hold a queen each. `left` and `right` are the squares of
// the next row attacked along the two diagonals, so a free square is one bit of free_squares().
struct board {
    std::uint32_t all;   // the N low bits: one per column
    std::uint32_t cols;  // columns taken
    std::uint32_t left;  // attacked by a queen above, along a diagonal whose column grows
    std::uint32_t right; // attacked by a queen above, along a diagonal whose column shrinks
    int row;

    std::uint32_t free_squares() const { return all & ~(cols | left | right); }
    // The board after a queen is placed on column `bit` (a single bit) of the next row: the
    // diagonals move one column as they go one row down.
    board place(std::uint32_t bit) const {
        return {all, cols | bit, (left | bit) << 1, (right | bit) >> 1, row + 1};
    }
};

// The serial search, and the reference for the parallel one.
long count_serial(const board& b) {
    if (b.cols == b.all)
        return 1;
    long count = 0;
    for (std::uint32_t free = b.free_squares(); free != 0; free &= free - 1)
        count += count_serial(b.place(free & -free));
    return count;
}

// The lowest half (rounded down) of the bits of `set`.
std::uint32_t lower_half(std::uint32_t set) {
    std::uint32_t low = 0;
    for (int k = std::popcount(set) / 2; k > 0; --k) {
        low |= set & -set;
        set &= set - 1;
    }
    return low;
}

long count_parallel(const board& b, int cutoff);

// Counts the solutions with the next queen on one of the columns in `choices`: one task per
// column. Halving the set, rather than forking the columns one by one in a loop, makes a balanced
// join tree, so a thief steals half of the remaining columns at once, not one.
long count_columns(const board& b, std::uint32_t choices, int cutoff) {
    if (choices == 0)
        return 0;
    if (std::has_single_bit(choices))
        return count_parallel(b.place(choices), cutoff);
    const std::uint32_t low = lower_half(choices);
    // References are safe: fj::join returns only after both branches are done.
    auto [a, c] = fj::join([&] { return count_columns(b, low, cutoff); },
                           [&] { return count_columns(b, choices ^ low, cutoff); });
    return a + c;
}

long count_parallel(const board& b, int cutoff) {
    // Deep subtrees are small and numerous: forking there costs more than it buys.
    if (b.row >= cutoff || b.cols == b.all)
        return count_serial(b);
    return count_columns(b, b.free_squares(), cutoff);
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"nqueens", "nqueens [N=12] [--cutoff C] [--workers W]"};
    int n = 12, cutoff = 4, workers = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--cutoff") == 0 && i + 1 < argc)
            cutoff = cli::parse<int>(argv[++i], 0, max_n, "--cutoff");
        else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = cli::parse<int>(
                argv[++i], 1, static_cast<int>(fj::scheduler_options::max_workers), "--workers");
        else if (argv[i][0] != '-')
            n = cli::parse<int>(argv[i], 1, max_n, "N");
        else
            cli::usage((std::string("unknown option '") + argv[i] + "'").c_str());
    }

    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(static_cast<std::size_t>(workers));
    fj::scheduler& pool = own ? *own : fj::default_scheduler();

    const board empty{(std::uint32_t{1} << n) - 1, 0, 0, 0, 0};
    const long expected = known_counts[n];
    long serial = 0, parallel = 0;
    const double t_serial = cli::seconds([&] { serial = count_serial(empty); });
    // The parallel search runs as one task on the pool; its future is waited for from main.
    const double t_parallel = cli::seconds(
        [&] { parallel = pool.submit([&] { return count_parallel(empty, cutoff); }).get(); });

    if (parallel != expected || serial != expected) {
        std::printf("MISMATCH: nqueens(%d): expected %ld, parallel %ld, serial %ld\n", n, expected,
                    parallel, serial);
        return 1;
    }
    std::printf("nqueens(%d) = %ld (expected %ld)\n", n, parallel, expected);
    std::printf("workers %zu, cutoff %d\n", pool.worker_count(), cutoff);
    std::printf("serial    %9.3f ms\n", t_serial * 1e3);
    std::printf("parallel  %9.3f ms   speed-up over serial %.2fx   (fj::join)\n", t_parallel * 1e3,
                t_serial / t_parallel);
    std::cout << "statistics:\n" << pool.stats();
    return 0;
}
