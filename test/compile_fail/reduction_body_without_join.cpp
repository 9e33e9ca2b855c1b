// expect: Body needs a member join
#include <forkjoin/forkjoin.hpp>

struct sum_body {
    long sum = 0;
    sum_body() = default;
    sum_body(sum_body&, fj::split) {}
    void operator()(const fj::blocked_range<int>& r) { sum += static_cast<long>(r.size()); }
};

int main() {
    sum_body body;
    fj::parallel_reduce(fj::blocked_range<int>{0, 100}, body);
}
