// The default worker count: FJ_WORKERS, else the CPUs this process may use.
#include "cpu_quota.hpp"
#include "system.hpp"

#include <cstdlib>
#include <sched.h>
#include <string>

#include <forkjoin/errors.hpp>
#include <forkjoin/options.hpp>

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

std::size_t parse_worker_count(const char* text) {
    const std::string value = text;
    const auto reject = [&] {
        throw_invalid_argument("FJ_WORKERS='" + value +
                               "' is not a worker count: use a whole number from 1 to " +
                               std::to_string(scheduler_options::max_workers) +
                               ", or unset it to use one worker per available CPU");
    };
    if (value.empty() || value.size() > 9)
        reject();
    std::size_t n = 0;
    for (char c : value) {
        if (c < '0' || c > '9')
            reject();
        n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    if (n == 0 || n > scheduler_options::max_workers)
        reject();
    return n;
}

std::size_t default_worker_count() {
    if (const char* env = std::getenv("FJ_WORKERS"); env != nullptr)
        return parse_worker_count(env);
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
