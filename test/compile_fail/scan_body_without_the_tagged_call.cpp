// expect: body must be callable as body.piece, fj::pre_scan_tag. and body.piece, fj::final
#include <forkjoin/forkjoin.hpp>

// A reduction body passed to the scan: operator() takes no tag.
struct running_sum {
    long sum = 0;
    running_sum() = default;
    running_sum(running_sum&, fj::split) {}
    void operator()(const fj::blocked_range<int>& r) { sum += static_cast<long>(r.size()); }
    void reverse_join(running_sum& left) { sum += left.sum; }
    void assign(running_sum& other) { sum = other.sum; }
};

int main() {
    running_sum body;
    fj::parallel_scan(fj::blocked_range<int>{0, 100}, body);
}
