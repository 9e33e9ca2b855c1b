// The divide-and-conquer workloads (dc_workloads.hpp) with OpenMP tasks: at every branch point
// the first branch becomes a task, the second runs inline, then taskwait. A team of exactly
// `workers` threads (the calling thread is one of them): one thread starts the recursion inside
// `single`, the others pick up tasks at the barrier. Only this file (and the other omp_*.cpp) is
// compiled with the OpenMP flags.
#include "competitors/loop_competitor.hpp"
#include "competitors/omp_runner.hpp"
#include "loop_workloads.hpp"

#include <cstddef>
#include <omp.h>

namespace {

using fj_perf::loop_io;

struct omp_join {
    template <class A, class B>
    void operator()(A&& a, B&& b) const {
        // shared: the task calls the caller's `a`, which outlives it because of the taskwait.
#pragma omp task default(shared)
        a();
        b();
#pragma omp taskwait
    }
};

double sort(int workers, loop_io const& io) {
#pragma omp parallel num_threads(workers)
#pragma omp single
    fj_perf::merge_sort(omp_join{}, io.keys, io.scratch, static_cast<std::size_t>(io.n), false);
    return 0;
}

double queens(int workers, loop_io const& io) {
    long count = 0;
#pragma omp parallel num_threads(workers) shared(count)
#pragma omp single
    count = fj_perf::queens(omp_join{}, fj_perf::board::empty(static_cast<int>(io.n)));
    return static_cast<double>(count);
}

using fj_perf::loop_competitor;
using fj_perf::loop_registrar;
using fj_perf::loop_workload;
using fj_perf::make_omp_runner;

loop_registrar const reg_sort{loop_competitor{loop_workload::merge_sort, "omp-task",
                                              "omp task + taskwait at every split", 30, false,
                                              &make_omp_runner<&sort>}};
loop_registrar const reg_queens{loop_competitor{loop_workload::nqueens, "omp-task",
                                                "omp task + taskwait over the free columns", 30,
                                                false, &make_omp_runner<&queens>}};

} // namespace
