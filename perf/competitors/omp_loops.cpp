// The loop workloads with OpenMP worksharing loops on a team of exactly `workers` threads (the
// calling thread is one of them). Two schedules:
//   omp-static   schedule(static): one contiguous block per thread, no balancing.
//   omp-dynamic  schedule(dynamic): chunk 1 for bbp_digits (the textbook choice for uneven
//                iterations); for the 10^8-index loops chunk ceil(n / 1024), the granularity of
//                fj's default reduce tree (chunk 1 would be 10^8 increments of a shared counter).
// bbp_series adds reduction(+:sum) to both. Only this file is compiled with the OpenMP flags.
#include "competitors/loop_competitor.hpp"
#include "competitors/omp_runner.hpp"
#include "loop_workloads.hpp"

#include <cstdint>
#include <omp.h>

namespace {

using fj_perf::loop_io;

std::uint64_t dynamic_chunk(std::uint64_t n) {
    return n < 1024 ? 1 : (n + 1023) / 1024;
}

double digits_static(int workers, loop_io const& io) {
    std::uint8_t* const out = io.digits;
#pragma omp parallel for num_threads(workers) schedule(static)
    for (std::uint64_t i = 0; i < io.n; ++i)
        fj_perf::bbp_digit_body(i, out);
    return 0;
}

double digits_dynamic(int workers, loop_io const& io) {
    std::uint8_t* const out = io.digits;
#pragma omp parallel for num_threads(workers) schedule(dynamic)
    for (std::uint64_t i = 0; i < io.n; ++i)
        fj_perf::bbp_digit_body(i, out);
    return 0;
}

double series_static(int workers, loop_io const& io) {
    double sum = 0.0;
#pragma omp parallel for num_threads(workers) schedule(static) reduction(+ : sum)
    for (std::uint64_t k = 0; k < io.n; ++k)
        sum += bbp::series_term(k);
    return sum;
}

double series_dynamic(int workers, loop_io const& io) {
    double sum = 0.0;
    std::uint64_t const chunk = dynamic_chunk(io.n);
#pragma omp parallel for num_threads(workers) schedule(dynamic, chunk) reduction(+ : sum)
    for (std::uint64_t k = 0; k < io.n; ++k)
        sum += bbp::series_term(k);
    return sum;
}

double empty_static(int workers, loop_io const& io) {
    fj_perf::empty_body const body{io.marks};
#pragma omp parallel for num_threads(workers) schedule(static)
    for (std::uint64_t i = 0; i < io.n; ++i)
        body(i);
    return 0;
}

double empty_dynamic(int workers, loop_io const& io) {
    fj_perf::empty_body const body{io.marks};
    std::uint64_t const chunk = dynamic_chunk(io.n);
#pragma omp parallel for num_threads(workers) schedule(dynamic, chunk)
    for (std::uint64_t i = 0; i < io.n; ++i)
        body(i);
    return 0;
}

using fj_perf::loop_competitor;
using fj_perf::loop_registrar;
using fj_perf::loop_workload;
using fj_perf::make_omp_runner;

loop_registrar const digits_s{loop_competitor{loop_workload::bbp_digits, "omp-static",
                                              "omp parallel for schedule(static)", 30, false,
                                              &make_omp_runner<&digits_static>}};
loop_registrar const digits_d{loop_competitor{loop_workload::bbp_digits, "omp-dynamic",
                                              "omp parallel for schedule(dynamic) (chunk 1)", 31,
                                              false, &make_omp_runner<&digits_dynamic>}};
loop_registrar const series_s{loop_competitor{loop_workload::bbp_series, "omp-static",
                                              "omp parallel for schedule(static) reduction(+:sum)",
                                              30, false, &make_omp_runner<&series_static>}};
loop_registrar const series_d{
    loop_competitor{loop_workload::bbp_series, "omp-dynamic",
                    "omp parallel for schedule(dynamic, ceil(n/1024)) reduction(+:sum)", 31, false,
                    &make_omp_runner<&series_dynamic>}};
loop_registrar const empty_s{loop_competitor{loop_workload::empty_for, "omp-static",
                                             "omp parallel for schedule(static)", 30, false,
                                             &make_omp_runner<&empty_static>}};
loop_registrar const empty_d{loop_competitor{loop_workload::empty_for, "omp-dynamic",
                                             "omp parallel for schedule(dynamic, ceil(n/1024))", 31,
                                             false, &make_omp_runner<&empty_dynamic>}};

} // namespace
