// The divide-and-conquer workloads (dc_workloads.hpp) on oneTBB: every branch point is
// tbb::parallel_invoke, inside a task_arena of exactly `workers` slots (the calling thread fills
// one of them, as a TBB user's main thread would).
#include "competitors/loop_competitor.hpp"
#include "competitors/tbb_runner.hpp"
#include "loop_workloads.hpp"

#include <cstddef>
#include <memory>

#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_arena.h>

namespace {

using fj_perf::loop_io;

struct tbb_join {
    template <class A, class B>
    void operator()(A&& a, B&& b) const {
        tbb::parallel_invoke(a, b);
    }
};

double sort(loop_io const& io) {
    fj_perf::merge_sort(tbb_join{}, io.keys, io.scratch, static_cast<std::size_t>(io.n), false);
    return 0;
}

double queens(loop_io const& io) {
    return static_cast<double>(
        fj_perf::queens(tbb_join{}, fj_perf::board::empty(static_cast<int>(io.n))));
}

using fj_perf::loop_competitor;
using fj_perf::loop_registrar;
using fj_perf::loop_workload;
using fj_perf::make_tbb_runner;

loop_registrar const reg_sort{loop_competitor{loop_workload::merge_sort, "tbb-invoke",
                                              "tbb::parallel_invoke at every split", 20, false,
                                              &make_tbb_runner<&sort>}};
loop_registrar const reg_queens{loop_competitor{loop_workload::nqueens, "tbb-invoke",
                                                "tbb::parallel_invoke over the free columns", 20,
                                                false, &make_tbb_runner<&queens>}};

} // namespace
