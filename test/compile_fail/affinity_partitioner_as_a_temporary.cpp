// expect: pass an fj::affinity_partitioner as a non-const lvalue
#include <forkjoin/forkjoin.hpp>

int main() {
    fj::parallel_for(
        fj::blocked_range<int>{0, 100}, [](const fj::blocked_range<int>&) {},
        fj::affinity_partitioner{});
}
