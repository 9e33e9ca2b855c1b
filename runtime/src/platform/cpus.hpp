// Facts about the machine that the runtime sizes itself by: the CPUs the process may run on.
#pragma once

#include <cstddef>
#include <vector>

namespace fj::detail {

// CPUs in the calling process's affinity mask (sched_getaffinity), in increasing order.
std::vector<int> affinity_cpus();

// How many CPUs are in the calling thread's affinity mask (at least 1). One system call, no
// allocation: cheap enough to re-read while idle.
std::size_t affinity_cpu_count() noexcept;

// The default worker count (fj::default_worker_count): FJ_WORKERS if set (environment.hpp), else
// the CPUs in the affinity mask lowered to the cgroup CPU quota (cpu_quota.hpp), at least 1.
std::size_t default_worker_count();

} // namespace fj::detail
