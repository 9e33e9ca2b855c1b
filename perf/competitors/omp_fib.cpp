// fib with OpenMP tasks: a team of exactly `workers` threads (the calling thread is one of them),
// one thread seeds the recursion inside `single`, the others pick up tasks at the barrier.
// Only this file is compiled with the OpenMP flags.
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <memory>
#include <omp.h>

namespace {

long fib_omp(int n, int cutoff) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fj_perf::fib_serial(n);
    long a = 0;
#pragma omp task shared(a) firstprivate(n, cutoff)
    a = fib_omp(n - 1, cutoff);
    long b = fib_omp(n - 2, cutoff);
#pragma omp taskwait
    return a + b;
}

class runner final : public fj_perf::fib_runner {
public:
    explicit runner(int workers) : m_workers(workers) { omp_set_dynamic(0); }
    long fib(int n, int cutoff) override {
        long r = 0;
        // num_threads(k) is omp_set_num_threads(k) scoped to this region.
#pragma omp parallel num_threads(m_workers) shared(r)
#pragma omp single
        r = fib_omp(n, cutoff);
        return r;
    }

private:
    int m_workers;
};

std::unique_ptr<fj_perf::fib_runner> make(int workers) {
    return std::make_unique<runner>(workers);
}

fj_perf::registrar const reg{fj_perf::fib_competitor{"omp", 30, &make}};

} // namespace
