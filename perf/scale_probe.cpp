// Fixed workloads for the at-scale counts (perf/at-scale.sh, docs/performance.md#at-scale): run
// under the fake-CPU preload so that a pool of P = N workers on a 2-core machine behaves as an
// uncrowded one, and counted (futex and membarrier calls) by `perf stat`. Prints the pool's own
// counters for the workload: sleeps, wake-ups, steals and failed steal probes, and the process's
// voluntary context switches (each a blocking system call: a futex wait, main's sleeps); with the
// fj_count_syscalls preload (perf/many-cores.sh, where perf is missing) also the membarrier and
// futex calls made through syscall(). With FJ_PERF_CTL and FJ_PERF_ACK naming `perf stat
// --delay -1 --control fifo:CTL,ACK`'s fifos, perf counts the workload only, not the pool's start
// and stop.
//   scale_probe regions|joins|fib|submit [--workers P]
//     regions  200 short parallel_for calls from main (4096 tiny iterations), 300 us apart
//     joins    one task doing 10^6 fj::join of two empty lambdas while the others idle
//     fib      fib(27), a join per node
//     submit   10^5 tiny tasks submitted from main, every future awaited
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

// Sends `command` ("enable\n" or "disable\n") to perf stat's control fifo and waits for its ack.
void perf_control(const char* command) {
    const char* ctl = std::getenv("FJ_PERF_CTL");
    const char* ack = std::getenv("FJ_PERF_ACK");
    if (ctl == nullptr || ack == nullptr)
        return;
    const int out = ::open(ctl, O_WRONLY | O_CLOEXEC);
    const int in = ::open(ack, O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0 || ::write(out, command, std::strlen(command)) < 0) {
        std::perror("perf control fifo");
        std::exit(1);
    }
    char reply[8];
    (void)::read(in, reply, sizeof reply);
    ::close(out);
    ::close(in);
}

long voluntary_switches() {
    rusage usage{};
    (void)::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_nvcsw;
}

// The fj_count_syscalls preload's counts (membarrier, futex through syscall()), or nothing when it
// is not loaded.
struct syscall_counts {
    bool counted = false;
    unsigned long long membarriers = 0;
    unsigned long long futexes = 0;
};

syscall_counts counted_syscalls() {
    using read_fn = void (*)(unsigned long long*, unsigned long long*);
    syscall_counts counts;
    if (const auto read = reinterpret_cast<read_fn>(dlsym(RTLD_DEFAULT, "fj_counted_syscalls"))) {
        counts.counted = true;
        read(&counts.membarriers, &counts.futexes);
    }
    return counts;
}

void opaque(int i) {
    asm volatile("" : : "r"(i) : "memory");
}

void regions(fj::scheduler& pool) {
    for (int r = 0; r < 200; ++r) {
        pool.execute([] { fj::parallel_for(0, 4096, [](int i) { opaque(i); }); });
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
}

void joins(fj::scheduler& pool) {
    pool.execute([] {
        for (int i = 0; i < 1'000'000; ++i)
            fj::join([i] { opaque(i); }, [i] { opaque(i); });
    });
}

long fib(int n) {
    if (n < 2)
        return n;
    auto [a, b] = fj::join([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
    return a + b;
}

void fib_part(fj::scheduler& pool) {
    if (pool.execute([] { return fib(27); }) != 196418) {
        std::fprintf(stderr, "fib(27): wrong result\n");
        std::exit(1);
    }
}

void submit(fj::scheduler& pool) {
    std::vector<fj::future<void>> futures;
    futures.reserve(100'000);
    for (int i = 0; i < 100'000; ++i)
        futures.push_back(pool.submit([i] { opaque(i); }));
    for (auto& f : futures)
        f.get();
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: scale_probe regions|joins|fib|submit [--workers P]\n");
        return 2;
    }
    const std::string what = argv[1];
    fj::scheduler_options options;
    options.workers = fj::default_worker_count();
    if (argc >= 4 && std::strcmp(argv[2], "--workers") == 0)
        options.workers = static_cast<std::size_t>(std::atol(argv[3]));
    fj::scheduler pool(options);
    // Every worker starts and goes idle before the workload: the counts are the workload's.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const fj::worker_stats before = pool.stats().total();
    const long switches_before = voluntary_switches();
    const syscall_counts syscalls_before = counted_syscalls();
    perf_control("enable\n");
    const auto began = std::chrono::steady_clock::now();
    if (what == "regions")
        regions(pool);
    else if (what == "joins")
        joins(pool);
    else if (what == "fib")
        fib_part(pool);
    else if (what == "submit")
        submit(pool);
    else {
        std::fprintf(stderr, "unknown workload %s\n", what.c_str());
        return 2;
    }
    const auto took = std::chrono::steady_clock::now() - began;
    perf_control("disable\n");
    const syscall_counts syscalls_after = counted_syscalls();
    const long switches = voluntary_switches() - switches_before;
    const fj::worker_stats after = pool.stats().total();
    std::printf(
        "workload=%s workers=%zu sleeps=%llu wakeups=%llu steals=%llu failed_steals=%llu "
        "failed_before_steal=%llu vcsw=%ld ms=%.1f",
        what.c_str(), options.workers,
        static_cast<unsigned long long>(after.sleeps - before.sleeps),
        static_cast<unsigned long long>(after.wakeups - before.wakeups),
        static_cast<unsigned long long>(after.steals - before.steals),
        static_cast<unsigned long long>(after.failed_steals - before.failed_steals),
        static_cast<unsigned long long>(after.failed_before_steal - before.failed_before_steal),
        switches, std::chrono::duration<double, std::milli>(took).count());
    if (syscalls_after.counted)
        std::printf(" membarrier=%llu futex_via_syscall=%llu",
                    syscalls_after.membarriers - syscalls_before.membarriers,
                    syscalls_after.futexes - syscalls_before.futexes);
    std::printf("\n");
    return 0;
}
