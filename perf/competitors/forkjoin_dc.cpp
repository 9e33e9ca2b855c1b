// The divide-and-conquer workloads (dc_workloads.hpp) on forkjoin: every branch point is fj::join.
// The driver calls them from its own thread, off the pool, as the examples do: the whole sort or
// search is one task submitted to the pool.
#include "competitors/forkjoin_runner.hpp"
#include "competitors/loop_competitor.hpp"
#include "loop_workloads.hpp"

#include <cstddef>
#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_perf::loop_io;

struct fj_join {
    template <class A, class B>
    void operator()(A&& a, B&& b) const {
        fj::join(a, b);
    }
};

double sort(fj::scheduler& pool, loop_io const& io) {
    pool.submit([&io] {
            fj_perf::merge_sort(fj_join{}, io.keys, io.scratch, static_cast<std::size_t>(io.n),
                                false);
        })
        .get();
    return 0;
}

double queens(fj::scheduler& pool, loop_io const& io) {
    auto const b = fj_perf::board::empty(static_cast<int>(io.n));
    return static_cast<double>(pool.submit([b] { return fj_perf::queens(fj_join{}, b); }).get());
}

using fj_perf::loop_competitor;
using fj_perf::loop_registrar;
using fj_perf::loop_workload;
using fj_perf::make_forkjoin_runner;

loop_registrar const reg_sort{loop_competitor{loop_workload::merge_sort, "fj",
                                              "fj::join at every split", 10, true,
                                              &make_forkjoin_runner<&sort>}};
loop_registrar const reg_queens{loop_competitor{loop_workload::nqueens, "fj",
                                                "fj::join over the free columns", 10, true,
                                                &make_forkjoin_runner<&queens>}};

} // namespace
