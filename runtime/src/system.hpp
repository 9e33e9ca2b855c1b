// Facts about the machine and the environment that the runtime sizes itself by.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fj::detail {

// CPUs in the calling process's affinity mask (sched_getaffinity), in increasing order.
std::vector<int> affinity_cpus();

// How many CPUs are in the calling thread's affinity mask (at least 1). One system call, no
// allocation: cheap enough to re-read while idle.
std::size_t affinity_cpu_count() noexcept;

// The default worker count (fj::default_worker_count): FJ_WORKERS if set (validated; throws
// std::invalid_argument with the offending value otherwise), else the CPUs in the affinity mask
// lowered to the cgroup CPU quota (cpu_quota.hpp), at least 1.
std::size_t default_worker_count();

// Parses a worker count as FJ_WORKERS gives it. Throws std::invalid_argument naming the value.
std::size_t parse_worker_count(const char* text);

// Process fork() safety (docs/design.md#fork). The generation counts the fork()s this process is
// the child of; a scheduler remembers the generation it was created in, and one created in an
// earlier generation has no worker threads here (they stayed in the parent).
std::uint64_t process_generation() noexcept;
// Registers the pthread_atfork handlers, once; called by every scheduler constructor.
void install_fork_handlers();
// The mutexes a child must not inherit locked, taken around fork() by the handlers.
void lock_central_pool() noexcept;
void unlock_central_pool() noexcept;
void lock_default_scheduler() noexcept;
void unlock_default_scheduler() noexcept;

} // namespace fj::detail
