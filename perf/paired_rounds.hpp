// The driver of a paired-rounds table (astar_bench, range_split_bench): the rows are the serial
// reference and every registered runtime; each round runs every row once, in an order that
// rotates by one from round to round, so a slow phase of the machine hits every row alike and
// the per-round ratios (print_paired_ratios, measure.hpp) compare rows measured side by side.
#pragma once

#include "measure.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace fj_perf {

// The rows of one table: the serial reference first (print_paired_ratios divides by it but
// never by the others), then every registered competitor in registration order.
template <class Competitor>
std::vector<Competitor> rows_with_serial(Competitor serial,
                                         const std::vector<Competitor>& registered) {
    std::vector<Competitor> rows{std::move(serial)};
    rows.insert(rows.end(), registered.begin(), registered.end());
    return rows;
}

// Each row's runner at `workers` workers, in row order. Made once per worker count: a runner
// keeps its pool alive, so the rounds time the work and not the pools' start.
template <class Competitor>
auto runners_of(const std::vector<Competitor>& rows, int workers) {
    std::vector<decltype(rows.front().make(workers))> runs;
    for (const auto& c : rows)
        runs.push_back(c.make(workers));
    return runs;
}

template <class Competitor>
std::vector<std::string> names_of(const std::vector<Competitor>& rows) {
    std::vector<std::string> names;
    for (const auto& c : rows)
        names.push_back(c.name);
    return names;
}

// Round `round`: run_row(i) for every row i once, starting one row further than the round
// before, so no row always runs first (on a cold cache) or right after the same neighbour.
template <class RunRow>
void for_each_row_rotated(int round, std::size_t rows, RunRow&& run_row) {
    for (std::size_t k = 0; k < rows; ++k)
        run_row((k + static_cast<std::size_t>(round)) % rows);
}

// `repeat` calls of run() under one clock: a row's time in a round is their mean, which a
// single call too short to time well cannot give. The results are kept for checking, outside
// the timed part.
template <class Result>
struct repeats {
    double mean_ms = 0;
    std::vector<Result> results;
};

template <class Run>
auto timed_repeats(int repeat, Run&& run) {
    repeats<decltype(run())> t;
    t.results.resize(static_cast<std::size_t>(repeat)); // allocated before the clock starts
    const double seconds = seconds_of([&] {
        for (auto& r : t.results)
            r = run();
    });
    t.mean_ms = seconds * 1e3 / repeat;
    return t;
}

// A row's times over the rounds: the median, which one disturbed round cannot move, and the
// range, which shows whether any was disturbed.
struct spread {
    double median = 0, lo = 0, hi = 0;
};

inline spread spread_of(const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return {median(v), *lo, *hi};
}

// The start of a worker count's table head, "  2 workers" padded to the width of the row
// names; the caller prints the column heads after it.
inline void print_workers_label(int workers) {
    std::printf("  %d worker%s %-9s ", workers, workers == 1 ? " " : "s", "");
}

} // namespace fj_perf
