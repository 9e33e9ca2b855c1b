// The loop workloads on oneTBB, inside a task_arena of exactly `workers` slots (the calling thread
// fills one of them, as a TBB user's main thread would):
//   tbb-for      tbb::parallel_for over a blocked_range, the default auto_partitioner, grain 1.
//   tbb-reduce   tbb::parallel_reduce (functional form), auto_partitioner, grain 1.
//   tbb-det      tbb::parallel_deterministic_reduce (simple_partitioner) with grain ceil(n/1024):
//                the same split tree as fj::parallel_reduce's default (halve while size > grain).
// Each chunk calls the same per-index body as every other runtime.
#include "competitors/loop_competitor.hpp"
#include "competitors/tbb_runner.hpp"
#include "loop_workloads.hpp"

#include <cstdint>
#include <functional>
#include <memory>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>

namespace {

using fj_perf::loop_io;
using range = tbb::blocked_range<std::uint64_t>;

double digits(loop_io const& io) {
    std::uint8_t* const out = io.digits;
    tbb::parallel_for(range(0, io.n), [out](range const& r) {
        for (std::uint64_t i = r.begin(); i != r.end(); ++i)
            fj_perf::bbp_digit_body(i, out);
    });
    return 0;
}

double series_chunk(range const& r, double acc) {
    for (std::uint64_t k = r.begin(); k != r.end(); ++k)
        acc += bbp::series_term(k);
    return acc;
}

double series(loop_io const& io) {
    return tbb::parallel_reduce(range(0, io.n), 0.0, &series_chunk, std::plus<>{});
}

double series_deterministic(loop_io const& io) {
    std::uint64_t const grain = io.n <= 1024 ? 1 : (io.n + 1023) / 1024;
    return tbb::parallel_deterministic_reduce(range(0, io.n, grain), 0.0, &series_chunk,
                                              std::plus<>{});
}

double empty(loop_io const& io) {
    fj_perf::empty_body const body{io.marks};
    tbb::parallel_for(range(0, io.n), [body](range const& r) {
        for (std::uint64_t i = r.begin(); i != r.end(); ++i)
            body(i);
    });
    return 0;
}

using fj_perf::loop_competitor;
using fj_perf::loop_registrar;
using fj_perf::loop_workload;
using fj_perf::make_tbb_runner;

loop_registrar const reg_digits{loop_competitor{loop_workload::bbp_digits, "tbb-for",
                                                "tbb::parallel_for (auto_partitioner)", 20, false,
                                                &make_tbb_runner<&digits>}};
loop_registrar const reg_series{loop_competitor{loop_workload::bbp_series, "tbb-reduce",
                                                "tbb::parallel_reduce (auto_partitioner)", 20,
                                                false, &make_tbb_runner<&series>}};
loop_registrar const reg_series_det{
    loop_competitor{loop_workload::bbp_series, "tbb-det",
                    "tbb::parallel_deterministic_reduce (simple_partitioner, grain ceil(n/1024))",
                    21, false, &make_tbb_runner<&series_deterministic>}};
loop_registrar const reg_empty{loop_competitor{loop_workload::empty_for, "tbb-for",
                                               "tbb::parallel_for (auto_partitioner)", 20, false,
                                               &make_tbb_runner<&empty>}};

} // namespace
