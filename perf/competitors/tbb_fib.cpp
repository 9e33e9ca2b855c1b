// fib on oneTBB: the canonical task_group recursion, on an arena of exactly `workers` slots
// (the calling thread fills one of them, as a TBB user's main thread would).
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <memory>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

namespace {

long fib_tbb(int n, int cutoff) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fj_perf::fib_serial(n);
    long a = 0;
    tbb::task_group tg;
    tg.run([&a, n, cutoff] { a = fib_tbb(n - 1, cutoff); });
    long b = fib_tbb(n - 2, cutoff);
    tg.wait();
    return a + b;
}

class runner final : public fj_perf::fib_runner {
public:
    explicit runner(int workers) : m_arena(workers) { m_arena.initialize(); }
    long fib(int n, int cutoff) override {
        return m_arena.execute([n, cutoff] { return fib_tbb(n, cutoff); });
    }

private:
    tbb::task_arena m_arena;
};

std::unique_ptr<fj_perf::fib_runner> make(int workers) {
    return std::make_unique<runner>(workers);
}

fj_perf::registrar const reg{fj_perf::fib_competitor{"tbb", 20, &make}};

} // namespace
