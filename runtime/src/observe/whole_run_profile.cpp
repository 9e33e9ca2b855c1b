// Whole-run profiling (docs/tracing.md#whole-run): a pool that profiles its whole run measures
// every task submitted to it as a root of one region, and prints the region's work, span and
// parallelism when it stops. An observer on top of the pool: events.cpp creates the region,
// hands it the pool's submissions and ends it here.
#include "observe/whole_run_profile.hpp"

#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>

#include <forkjoin/detail/profile_frame.hpp>
#include <forkjoin/profile_report.hpp>

namespace fj::detail {

void print_whole_run_profile(const profile_region& region, std::uint64_t pool_id,
                             std::size_t workers) noexcept {
    try {
        profile_forget(region);
        const profile_report r = make_profile_report(region);
        std::ostringstream line;
        line << "fj profile: scheduler #" << pool_id << ", whole run: " << r
             << "; speed-up bound on " << workers << " workers " << std::fixed
             << std::setprecision(2) << r.speedup_bound(workers) << "x\n";
        std::fputs(line.str().c_str(), stderr);
    } catch (...) { // std::bad_alloc: the report is a diagnostic, never a reason to fail shutdown
    }
}

} // namespace fj::detail
