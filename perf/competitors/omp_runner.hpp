// The loops driver's runner for OpenMP workloads (omp_loops.cpp, omp_dc.cpp): each Run opens its
// own parallel region with num_threads(workers).
#pragma once

#include "competitors/loop_competitor.hpp"

#include <memory>
#include <omp.h>

namespace fj_perf {

template <double (*Run)(int, loop_io const&)>
std::unique_ptr<loop_runner> make_omp_runner(int workers) {
    omp_set_dynamic(0); // exactly num_threads threads
    return make_plain_runner<Run>(workers);
}

} // namespace fj_perf
