// What timed waits cost when a release ends them first, the common case of a wait_for with a
// timeout as a safety net (docs/performance.md#timers). Every such wait that parks arms a timer
// before parking and disarms it after resuming.
//   timer_probe [--workers N] [--messages M] [--rounds R]
//     N pairs of tasks on a pool of N workers (default 2); each pair passes a token back and
//     forth M times (default 20,000) through two fj::binary_semaphore, each wait a
//     try_acquire_for(10 s). Per round: ns per message (wall time / (N x M)), the pool's parks
//     and the process's voluntary context switches per 1,000 messages (a thread that blocks, on
//     a contended lock or in the kernel's sleep, switches voluntarily). Under the fj_fake_cpus
//     preload (FJ_FAKE_CPUS=N) a pool of N > 2 workers on 2 cores is an uncrowded one, as on N
//     cores.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
    std::size_t workers = 2;
    int messages = 20'000;
    int rounds = 5;
};

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: timer_probe [--workers N] [--messages M] [--rounds R]\n");
    std::exit(2);
}

long positive(const char* text) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1)
        usage();
    return value;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        if (i + 1 >= argc)
            usage();
        const std::string name = argv[i];
        const long value = positive(argv[++i]);
        if (name == "--workers")
            o.workers = static_cast<std::size_t>(value);
        else if (name == "--messages")
            o.messages = static_cast<int>(value);
        else if (name == "--rounds")
            o.rounds = static_cast<int>(value);
        else
            usage();
    }
    return o;
}

long voluntary_switches() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_nvcsw;
}

struct pair_of_semaphores {
    fj::binary_semaphore ping{1};
    fj::binary_semaphore pong{0};
};

// One side of a pair: take the token from `mine`, hand it to `theirs`, `messages` times.
void pass(fj::binary_semaphore& mine, fj::binary_semaphore& theirs, int messages) {
    for (int i = 0; i < messages; ++i) {
        if (!mine.try_acquire_for(std::chrono::seconds(10))) {
            std::fprintf(stderr, "timer_probe: a wait timed out\n");
            std::exit(1);
        }
        theirs.release();
    }
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    fj::scheduler_options pool_options;
    pool_options.workers = o.workers;
    fj::scheduler pool(pool_options);
    const double messages = static_cast<double>(o.workers) * o.messages;
    std::printf("timer_probe: %zu workers, %zu pairs, %d messages a pair, %d rounds\n", o.workers,
                o.workers, o.messages, o.rounds);
    std::printf("round  ns/message  parks/message  voluntary switches per 1000 messages\n");
    std::vector<double> ns;
    for (int round = 0; round < o.rounds; ++round) {
        std::vector<std::unique_ptr<pair_of_semaphores>> pairs;
        for (std::size_t p = 0; p < o.workers; ++p)
            pairs.push_back(std::make_unique<pair_of_semaphores>());
        const std::uint64_t parks_before = pool.stats().total().parks;
        const long switches_before = voluntary_switches();
        const auto began = clock_type::now();
        std::vector<fj::future<void>> sides;
        for (auto& pair : pairs) {
            pair_of_semaphores& s = *pair;
            sides.push_back(pool.submit([&s, &o] { pass(s.ping, s.pong, o.messages); }));
            sides.push_back(pool.submit([&s, &o] { pass(s.pong, s.ping, o.messages); }));
        }
        for (auto& side : sides)
            side.get();
        const double elapsed =
            std::chrono::duration<double, std::nano>(clock_type::now() - began).count();
        const double parks = static_cast<double>(pool.stats().total().parks - parks_before);
        const double switches = static_cast<double>(voluntary_switches() - switches_before);
        ns.push_back(elapsed / messages);
        std::printf("%5d  %10.1f  %13.2f  %8.2f\n", round, elapsed / messages, parks / messages,
                    switches * 1000.0 / messages);
    }
    std::sort(ns.begin(), ns.end());
    std::printf("median ns/message: %.1f\n", ns[ns.size() / 2]);
    return 0;
}
