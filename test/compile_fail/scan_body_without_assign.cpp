// expect: Body needs a member assign
#include <forkjoin/forkjoin.hpp>

struct running_sum {
    long sum = 0;
    running_sum() = default;
    running_sum(running_sum&, fj::split) {}
    template <class Tag>
    void operator()(const fj::blocked_range<int>& r, Tag) {
        sum += static_cast<long>(r.size());
    }
    void reverse_join(running_sum& left) { sum += left.sum; }
};

int main() {
    running_sum body;
    fj::parallel_scan(fj::blocked_range<int>{0, 100}, body);
}
