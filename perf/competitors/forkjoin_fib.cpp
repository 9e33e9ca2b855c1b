// fib on forkjoin, in the two styles users write: the seed's fork + reschedule_until, and the
// structured, allocation-free join.
#include "competitors/competitor.hpp"
#include "workloads.hpp"

#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

long fib_seed(fj::scheduler& pool, int n, int cutoff) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fj_perf::fib_serial(n);
    auto f = pool.fork([&pool, n, cutoff] { return fib_seed(pool, n - 1, cutoff); });
    long b = fib_seed(pool, n - 2, cutoff);
    pool.reschedule_until([&] { return f.is_ready(); });
    return f.get() + b;
}

long fib_join(fj::scheduler& pool, int n, int cutoff) {
    if (n < 2)
        return n;
    if (n < cutoff)
        return fj_perf::fib_serial(n);
    auto [a, b] = pool.join([&] { return fib_join(pool, n - 1, cutoff); },
                            [&] { return fib_join(pool, n - 2, cutoff); });
    return a + b;
}

std::string describe(fj::scheduler& pool) {
    auto const s = pool.stats().total();
    return "tasks_run=" + std::to_string(s.tasks_run) + " forks=" + std::to_string(s.forks) +
           " steals=" + std::to_string(s.steals) + " sleeps=" + std::to_string(s.sleeps);
}

// The entry task is submitted from the driver's thread; the recursion runs on the workers.
template <long (*Fib)(fj::scheduler&, int, int)>
class runner final : public fj_perf::fib_runner {
public:
    explicit runner(int workers) : m_pool(static_cast<std::size_t>(workers)) {}
    long fib(int n, int cutoff) override {
        return m_pool.submit([this, n, cutoff] { return Fib(m_pool, n, cutoff); }).get();
    }
    std::string stats() override { return describe(m_pool); }

private:
    fj::scheduler m_pool;
};

template <long (*Fib)(fj::scheduler&, int, int)>
std::unique_ptr<fj_perf::fib_runner> make(int workers) {
    return std::make_unique<runner<Fib>>(workers);
}

fj_perf::registrar const seed{fj_perf::fib_competitor{"fj-seed", 10, &make<&fib_seed>}};
fj_perf::registrar const join{fj_perf::fib_competitor{"fj-join", 11, &make<&fib_join>}};

} // namespace
