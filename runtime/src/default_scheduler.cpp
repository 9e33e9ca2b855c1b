// The process-wide default scheduler and the default worker count.
#include "system.hpp"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sched.h>
#include <string>

#include <forkjoin/async.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/options.hpp>

namespace fj {

namespace {

// The default scheduler is created on first use (a program that never uses it starts no threads)
// and destroyed at exit, where its destructor finishes every queued task first. In the child of a
// fork() the one inherited from the parent has no threads: it is abandoned (never destroyed: it
// would wait for threads that are not there) and a fresh one is created (#fork).
struct default_holder {
    std::mutex mutex;
    std::unique_ptr<scheduler> current; // guarded by mutex
    std::atomic<scheduler*> published{nullptr};
    std::atomic<std::uint64_t> generation{0};
};

default_holder& holder() {
    static default_holder h;
    return h;
}

} // namespace

scheduler& default_scheduler() {
    default_holder& h = holder();
    const std::uint64_t generation = detail::process_generation();
    // acquire: pairs with the release below, so the scheduler is fully built when seen.
    scheduler* s = h.published.load(std::memory_order_acquire);
    if (s != nullptr && h.generation.load(std::memory_order_relaxed) == generation) [[likely]]
        return *s;
    std::lock_guard lock(h.mutex);
    if (h.current == nullptr || h.generation.load(std::memory_order_relaxed) != generation) {
        if (h.current != nullptr)
            (void)h.current.release(); // created before fork(): its threads live in the parent
        h.current = std::make_unique<scheduler>();
        h.generation.store(generation, std::memory_order_relaxed);
        h.published.store(h.current.get(), std::memory_order_release);
    }
    return *h.current;
}

} // namespace fj

namespace fj::detail {

void lock_default_scheduler() noexcept {
    holder().mutex.lock();
}

void unlock_default_scheduler() noexcept {
    holder().mutex.unlock();
}

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
