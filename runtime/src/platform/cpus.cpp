// The default worker count: FJ_WORKERS, else the CPUs this process may use.
#include "platform/cpus.hpp"

#include "platform/cpu_quota.hpp"
#include "platform/environment.hpp"

#include <sched.h>

namespace fj::detail {

std::vector<int> affinity_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set))
                cpus.push_back(cpu);
    }
    if (cpus.empty())
        cpus.push_back(0); // the call cannot fail for our own pid; be safe anyway
    return cpus;
}

std::size_t affinity_cpu_count() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 1;
    const int n = CPU_COUNT(&set);
    return n > 0 ? static_cast<std::size_t>(n) : 1;
}

std::size_t default_worker_count() {
    if (const std::size_t n = environment_worker_count(); n != 0)
        return n;
    // Read on every call, not cached: a scheduler created after the limit changes (a container's
    // CPUs resized in place) sizes itself by the new one.
    return usable_cpus(affinity_cpus().size(), process_cgroup_cpu_limit());
}

} // namespace fj::detail

namespace fj {

std::size_t default_worker_count() {
    return detail::default_worker_count();
}

} // namespace fj
