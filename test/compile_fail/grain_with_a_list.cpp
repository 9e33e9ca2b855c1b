// expect: fj::grain applies to random-access iterators
#include <list>

#include <forkjoin/forkjoin.hpp>

int main() {
    std::list<int> items(10);
    fj::parallel_for_each(
        items.begin(), items.end(), [](int&) {}, fj::grain{4});
}
