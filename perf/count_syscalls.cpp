// A preload library that counts the runtime's own system calls where `perf` cannot
// (perf/many-cores.sh): it wraps syscall() and counts membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
// and futex calls made through it. The sleep protocol's heavy barrier is the runtime's only
// membarrier caller and goes through syscall() (runtime/src/platform/asymmetric_barrier.cpp), so
// that count is exact. The futex calls glibc makes inside pthread_cond_wait() and mutex slow paths
// do not go through syscall() and are not counted here: scale_probe reports the process's
// voluntary context switches and the pool's sleeps and wake-ups for them.
//   LD_PRELOAD=libfj_count_syscalls.so ./program   (read with fj_counted_syscalls(), below)
#include <atomic>
#include <cstdarg>
#include <dlfcn.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

namespace {

// Relaxed throughout: plain event counts, with no data published through them. A reader takes
// them before and after a workload whose threads it has joined with (a future's get(), which
// synchronises), so every call the workload made is in the second read.
std::atomic<unsigned long long> g_membarriers{0};
std::atomic<unsigned long long> g_futexes{0};

using syscall_fn = long (*)(long, ...);

} // namespace

extern "C" {

// What a program reads through dlsym(RTLD_DEFAULT, "fj_counted_syscalls") when this library is
// preloaded: the calls counted since the process began.
void fj_counted_syscalls(unsigned long long* membarriers, unsigned long long* futexes) {
    *membarriers = g_membarriers.load(std::memory_order_relaxed);
    *futexes = g_futexes.load(std::memory_order_relaxed);
}

long syscall(long number, ...) {
    // Every syscall takes at most six arguments in registers; reading six is what glibc's own
    // wrapper does, whatever the call's arity.
    va_list list;
    va_start(list, number);
    long args[6];
    for (long& arg : args)
        arg = va_arg(list, long);
    va_end(list);
    if (number == SYS_membarrier && args[0] == MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        g_membarriers.fetch_add(1, std::memory_order_relaxed);
    else if (number == SYS_futex)
        g_futexes.fetch_add(1, std::memory_order_relaxed);
    static const auto real = reinterpret_cast<syscall_fn>(dlsym(RTLD_NEXT, "syscall"));
    return real(number, args[0], args[1], args[2], args[3], args[4], args[5]);
}

} // extern "C"
