// Whole-run profiling (whole_run_profile.cpp): the report at a pool's stop.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fj::detail {

struct profile_region;

// Prints one line to stderr: the region's work, span, parallelism and speed-up bound on
// `workers` workers. Drops the region's unjoined edges. Never throws.
void print_whole_run_profile(const profile_region& region, std::uint64_t pool_id,
                             std::size_t workers) noexcept;

} // namespace fj::detail
