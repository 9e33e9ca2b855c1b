// The registration table of the sort_bench driver (sort_bench.cpp): one entry per parallel sort,
// registered by a static `sort_registrar` in its runtime's file (forkjoin_sort.cpp,
// tbb_sort.cpp). CMake compiles a runtime's file only when the runtime was found, so the driver
// iterates the table and has no #ifdefs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fj_perf {

// One sort on one pool / arena of a fixed number of workers. Creating a runner (starting
// threads) is never timed; the sort calls are.
class sort_runner {
public:
    virtual ~sort_runner() = default;
    virtual void sort(std::vector<std::int32_t>& v) = 0;
    virtual void sort(std::vector<double>& v) = 0;
    virtual void sort(std::vector<std::string>& v) = 0;
    // How many distinct threads ran comparisons in one sort of v, to show that a competitor
    // really runs in parallel (0: not measured).
    virtual int threads_used(std::vector<std::int32_t>& v) = 0;
};

struct sort_competitor {
    std::string name; // row label, e.g. "fj", "tbb"
    std::string what; // legend: the call it times
    int rank;         // print order (smaller first)
    std::unique_ptr<sort_runner> (*make)(int workers);
};

// The table, sorted by rank each time it is read.
std::vector<sort_competitor> const& sort_competitors();

struct sort_registrar {
    explicit sort_registrar(sort_competitor c);
};

} // namespace fj_perf
