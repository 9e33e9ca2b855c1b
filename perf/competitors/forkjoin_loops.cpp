// The loop workloads on forkjoin: fj::parallel_for with its default adaptive splitting (lazy
// binary splitting, no grain given) and fj::parallel_reduce with its default deterministic grain
// (about n / 1024); fj-fnref is the same reduce with a function, not a lambda, as its map. The
// driver calls them from its own thread, off the pool, as a user would: the whole loop becomes one
// task injected into the pool.
#include "competitors/forkjoin_runner.hpp"
#include "competitors/loop_competitor.hpp"
#include "loop_workloads.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_perf::loop_io;

double digits(fj::scheduler& pool, loop_io const& io) {
    std::uint8_t* const out = io.digits;
    fj::parallel_for(pool, std::uint64_t{0}, io.n,
                     [out](std::uint64_t i) { fj_perf::bbp_digit_body(i, out); });
    return 0;
}

// The map is a lambda, so the leaf loop inlines series_term as the OpenMP and TBB loops do.
double series(fj::scheduler& pool, loop_io const& io) {
    return fj::parallel_reduce(
        pool, std::uint64_t{0}, io.n, 0.0, [](std::uint64_t k) { return bbp::series_term(k); },
        std::plus<>{});
}

// The same with the function itself as the map, as examples/bbp_pi.cpp writes it. Map is then a
// function reference, which the leaf calls indirectly once per term: the compiler does not see
// through the reference once the reduce tree is a separate (recursive) function.
double series_fnref(fj::scheduler& pool, loop_io const& io) {
    return fj::parallel_reduce(pool, std::uint64_t{0}, io.n, 0.0, bbp::series_term, std::plus<>{});
}

double empty(fj::scheduler& pool, loop_io const& io) {
    fj::parallel_for(pool, std::uint64_t{0}, io.n, fj_perf::empty_body{io.marks});
    return 0;
}

using fj_perf::loop_competitor;
using fj_perf::loop_registrar;
using fj_perf::loop_workload;
using fj_perf::make_forkjoin_runner;

loop_registrar const reg_digits{loop_competitor{loop_workload::bbp_digits, "fj",
                                                "fj::parallel_for (adaptive, no grain)", 10, true,
                                                &make_forkjoin_runner<&digits>}};
loop_registrar const reg_series{
    loop_competitor{loop_workload::bbp_series, "fj",
                    "fj::parallel_reduce (deterministic, default grain ~n/1024), map = a lambda",
                    10, true, &make_forkjoin_runner<&series>}};
loop_registrar const reg_series_fnref{loop_competitor{
    loop_workload::bbp_series, "fj-fnref",
    "the same with map = bbp::series_term itself (a function reference, as in bbp_pi.cpp)", 11,
    true, &make_forkjoin_runner<&series_fnref>}};
loop_registrar const reg_empty{loop_competitor{loop_workload::empty_for, "fj",
                                               "fj::parallel_for (adaptive, no grain)", 10, true,
                                               &make_forkjoin_runner<&empty>}};

} // namespace
