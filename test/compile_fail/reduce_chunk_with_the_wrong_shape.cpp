// expect: chunk must be callable as chunk\(piece, acc\)
#include <functional>

#include <forkjoin/forkjoin.hpp>

int main() {
    // The chunk forgets the accumulator.
    return static_cast<int>(fj::parallel_reduce(
        fj::blocked_range<int>{0, 100}, 0L,
        [](const fj::blocked_range<int>& r) { return static_cast<long>(r.size()); },
        std::plus<>{}));
}
