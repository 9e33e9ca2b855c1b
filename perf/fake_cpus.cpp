// A preload library for the at-scale counts (perf/at-scale.sh): makes sched_getaffinity report
// CPUs 0 .. N-1 when FJ_FAKE_CPUS=N is set, so that a process on a small machine sizes itself,
// and decides whether it is crowded, as it would on N CPUs. The runtime reads its CPU count only
// through sched_getaffinity (runtime/src/platform/cpus.cpp) and the cgroup quota, which this
// machine leaves unset. Without FJ_FAKE_CPUS the real call runs.
//   LD_PRELOAD=libfj_fake_cpus.so FJ_FAKE_CPUS=64 ./program
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sched.h>

using getaffinity_fn = int (*)(pid_t, std::size_t, cpu_set_t*);

extern "C" int sched_getaffinity(pid_t pid, std::size_t size, cpu_set_t* set) {
    const char* text = std::getenv("FJ_FAKE_CPUS");
    const long n = text != nullptr ? std::strtol(text, nullptr, 10) : 0;
    if (n <= 0) {
        static const auto real =
            reinterpret_cast<getaffinity_fn>(dlsym(RTLD_NEXT, "sched_getaffinity"));
        return real(pid, size, set);
    }
    if (static_cast<std::size_t>(n) > size * 8) {
        errno = EINVAL;
        return -1;
    }
    std::memset(set, 0, size);
    for (long cpu = 0; cpu < n; ++cpu)
        CPU_SET_S(static_cast<std::size_t>(cpu), size, set);
    return 0;
}
