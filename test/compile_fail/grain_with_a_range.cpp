// expect: a range carries its own grain
#include <forkjoin/forkjoin.hpp>

int main() {
    fj::parallel_for(
        fj::blocked_range<int>{0, 100}, [](const fj::blocked_range<int>&) {}, fj::grain{64});
}
