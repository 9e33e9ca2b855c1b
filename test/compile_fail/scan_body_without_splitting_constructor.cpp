// expect: fj::parallel_scan.range, body.: Body needs a splitting constructor
#include <forkjoin/forkjoin.hpp>

struct running_sum {
    long sum = 0;
    template <class Tag>
    void operator()(const fj::blocked_range<int>& r, Tag) {
        sum += static_cast<long>(r.size());
    }
    void reverse_join(running_sum& left) { sum += left.sum; }
    void assign(running_sum& other) { sum = other.sum; }
};

int main() {
    running_sum body;
    fj::parallel_scan(fj::blocked_range<int>{0, 100}, body);
}
