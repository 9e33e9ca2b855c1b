// expect: fn must be callable as fn\(\*it\)
#include <list>
#include <string>

#include <forkjoin/forkjoin.hpp>

int main() {
    std::list<int> items(10);
    fj::parallel_for_each(items.begin(), items.end(), [](std::string&) {});
}
