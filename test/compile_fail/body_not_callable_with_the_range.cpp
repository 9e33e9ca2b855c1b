// expect: body must be callable with the range
#include <forkjoin/forkjoin.hpp>

int main() {
    // The body takes an index, but a range form hands it pieces of the range.
    fj::parallel_for(fj::blocked_range<int>{0, 100}, [](int) {});
}
