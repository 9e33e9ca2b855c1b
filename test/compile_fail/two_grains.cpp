// expect: pass at most one fj::grain
#include <forkjoin/forkjoin.hpp>

int main() {
    fj::parallel_for(
        0, 100, [](int) {}, fj::grain{4}, fj::grain{8});
}
