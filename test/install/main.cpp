// Smallest program that proves the installed package works: header found, library linked,
// dependencies (Boost, Threads) pulled in by forkjoinConfig.cmake or named by forkjoin.pc.
#include <cstdio>

#include <forkjoin/forkjoin.hpp>

int main() {
    fj::scheduler pool{2};
    auto f = pool.submit([] { return 6 * 7; });
    if (f.get() != 42) {
        return 1;
    }
    std::puts("install ok");
}
