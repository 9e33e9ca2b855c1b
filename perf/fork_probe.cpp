// A minimal fork/join probe for counting instructions per fork with callgrind
// (perf/instructions-per-fork.sh). Uses only the API every commit has had (scheduler, join, fork,
// get), so the same file builds against an older commit for an A/B comparison.
//   fork_probe join|future N    fib(N) on a 1-worker pool, every call forking
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <forkjoin/scheduler.hpp>

namespace {

long fib_join(fj::scheduler& s, int n) {
    if (n < 2)
        return n;
    auto [a, b] = s.join([&] { return fib_join(s, n - 1); }, [&] { return fib_join(s, n - 2); });
    return a + b;
}

long fib_future(fj::scheduler& s, int n) {
    if (n < 2)
        return n;
    auto left = s.fork([&s, n] { return fib_future(s, n - 1); });
    const long right = fib_future(s, n - 2);
    return left.get() + right;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::strcmp(argv[1], "join") != 0 && std::strcmp(argv[1], "future") != 0)) {
        std::fprintf(stderr, "usage: fork_probe join|future N\n");
        return 2;
    }
    const bool join = std::strcmp(argv[1], "join") == 0;
    const int n = std::atoi(argv[2]);
    fj::scheduler s(1);
    // wait() before get(): the fork path of a worker is what is counted, and a get() alone
    // could run the task on this thread as a caller instead (docs/design/callers.md#take-over).
    auto f = s.submit([&] { return join ? fib_join(s, n) : fib_future(s, n); });
    f.wait();
    const long r = f.get();
    std::printf("fib(%d) = %ld\n", n, r);
    return 0;
}
