// The registration table through which the perf drivers discover competitors.
//
// Each competitor is one translation unit per workload (forkjoin_fib.cpp, tbb_fib.cpp, ...).
// It defines a static `registrar` that appends its entry here during static initialisation.
// CMake compiles a competitor's files only when its package or flag was found, so the drivers
// simply iterate the table: no #ifdef HAVE_TBB anywhere (style.md practice 13).
// The drivers link the competitor objects directly (CMake OBJECT libraries), so no registrar is
// dropped by the linker the way an unreferenced member of a static library would be.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fj_perf {

// Parallel fib on one pool / arena / team of a fixed number of workers. Creating a runner
// (starting threads) is never timed; fib() is. See workloads.hpp for the cutoff rule.
class fib_runner {
public:
    virtual ~fib_runner() = default;
    virtual long fib(int n, int cutoff) = 0;
    // One line of runtime counters accumulated since construction, or "" if the runtime has none.
    virtual std::string stats() { return {}; }
};

struct fib_competitor {
    std::string name; // row label, e.g. "fj-join", "tbb"
    int rank;         // print order (smaller first)
    std::unique_ptr<fib_runner> (*make)(int workers);
};

// Tiny tasks submitted from a thread outside the pool (the driver's main thread).
struct task_competitor {
    std::string name;
    int rank;
    bool honours_workers; // false: the runtime has no pool size (std::async: one thread per task)
    long max_tasks;       // the throughput count is capped to this (std::async is slow)
    // Starts a pool of `workers` (not timed), submits `count` tiny tasks producing
    // tiny_task_value(i), waits for all, checks the sum; returns ns from first submit to last done.
    std::int64_t (*throughput)(int workers, long count);
    // Optional (nullptr = not measured): `samples` submit-to-start latencies in ns, each taken on
    // an idle pool after sleeping `gap`.
    std::vector<std::int64_t> (*latency)(int workers, int samples, std::chrono::microseconds gap);
};

// The tables, sorted by rank each time they are read.
std::vector<fib_competitor> const& fib_competitors();
std::vector<task_competitor> const& task_competitors();

struct registrar {
    explicit registrar(fib_competitor c);
    explicit registrar(task_competitor c);
};

} // namespace fj_perf
