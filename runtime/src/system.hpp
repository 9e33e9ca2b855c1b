// Facts about the machine and the environment that the runtime sizes itself by.
#pragma once

#include <cstddef>
#include <vector>

namespace fj::detail {

// CPUs in the calling process's affinity mask (sched_getaffinity), in increasing order.
std::vector<int> affinity_cpus();

// The default worker count: FJ_WORKERS if set (validated; throws std::invalid_argument with the
// offending value otherwise), else the number of CPUs in the affinity mask.
std::size_t default_worker_count();

// Parses a worker count as FJ_WORKERS gives it. Throws std::invalid_argument naming the value.
std::size_t parse_worker_count(const char* text);

} // namespace fj::detail
