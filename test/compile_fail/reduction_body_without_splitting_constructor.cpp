// expect: Body needs a splitting constructor
#include <forkjoin/forkjoin.hpp>

struct sum_body {
    long sum = 0;
    void operator()(const fj::blocked_range<int>& r) { sum += static_cast<long>(r.size()); }
    void join(sum_body& other) { sum += other.sum; }
};

int main() {
    sum_body body;
    fj::parallel_reduce(fj::blocked_range<int>{0, 100}, body);
}
