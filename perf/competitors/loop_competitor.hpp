// The registration table of the `loops` driver (loops.cpp): parallel loops on each runtime.
//
// One entry per workload and per variant (fj::parallel_for, OpenMP schedule(static), ...), each
// registered by a static `loop_registrar` in its runtime's file (forkjoin_loops.cpp,
// omp_loops.cpp, tbb_loops.cpp). As with competitor.hpp, CMake compiles a runtime's file only
// when the runtime was found, so the driver iterates the table and has no #ifdefs.
#pragma once

#include "loop_workloads.hpp"

#include <memory>
#include <string>
#include <vector>

namespace fj_perf {

// One variant on one pool / arena / team of a fixed number of workers. Creating a runner
// (starting threads) is never timed; run() is.
class loop_runner {
public:
    virtual ~loop_runner() = default;
    // Runs the entry's workload on io (loop_workloads.hpp). Returns the sum for bbp_series, 0
    // otherwise (the outputs are then in io's buffers).
    virtual double run(loop_io const& io) = 0;
    // One line of runtime counters accumulated since construction, or "" if the runtime has none.
    virtual std::string stats() { return {}; }
};

struct loop_competitor {
    loop_workload workload;
    std::string name; // row label, e.g. "fj", "omp-static", "tbb-det"
    std::string what; // legend: the call it times, e.g. "fj::parallel_for (adaptive)"
    int rank;         // print order (smaller first)
    // true: timed at every --workers count (forkjoin, the subject); false: at the largest only,
    // and the row is a reference: every row gets a time-ratio column to it.
    bool sweep_workers;
    std::unique_ptr<loop_runner> (*make)(int workers);
};

// The table, sorted by rank each time it is read.
std::vector<loop_competitor> const& loop_competitors();

struct loop_registrar {
    explicit loop_registrar(loop_competitor c);
};

// A runner from a function: run(workers, io) -> double. For runtimes whose "pool" is just a
// thread count (OpenMP).
template <double (*Run)(int, loop_io const&)>
std::unique_ptr<loop_runner> make_plain_runner(int workers) {
    class runner final : public loop_runner {
    public:
        explicit runner(int w) : m_workers(w) {}
        double run(loop_io const& io) override { return Run(m_workers, io); }

    private:
        int m_workers;
    };
    return std::make_unique<runner>(workers);
}

} // namespace fj_perf
