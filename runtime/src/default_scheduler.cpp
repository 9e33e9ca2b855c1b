// The process-wide default scheduler and the default worker count.
#include "system.hpp"

#include <cstdlib>
#include <sched.h>
#include <string>

#include <forkjoin/async.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/options.hpp>

namespace fj {

scheduler& default_scheduler() {
    // A function-local static: created on first use (a program that never uses it starts no
    // threads), destroyed at exit, where its destructor finishes every queued task first.
    static scheduler instance;
    return instance;
}

} // namespace fj

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
    return affinity_cpus().size();
}

} // namespace fj::detail
