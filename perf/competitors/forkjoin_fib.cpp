// fib on forkjoin, in the two styles users write: the seed's fork + reschedule_until, and the
// structured, allocation-free join; each with waiting tasks parked on fibers ("+park") and with
// help-while-waiting, so the fast-path cost of parking is an interleaved A/B in one run.
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
fj::scheduler_options options_for(int workers, bool park) {
    fj::scheduler_options options;
    options.workers = static_cast<std::size_t>(workers);
    options.park_waiting_tasks = park; // FJ_PARKING, if set, still overrides both rows
    return options;
}

template <long (*Fib)(fj::scheduler&, int, int), bool Park>
class runner final : public fj_perf::fib_runner {
public:
    explicit runner(int workers) : m_pool(options_for(workers, Park)) {}
    long fib(int n, int cutoff) override {
        return m_pool.submit([this, n, cutoff] { return Fib(m_pool, n, cutoff); }).get();
    }
    std::string stats() override { return describe(m_pool); }

private:
    fj::scheduler m_pool;
};

template <long (*Fib)(fj::scheduler&, int, int), bool Park>
std::unique_ptr<fj_perf::fib_runner> make(int workers) {
    return std::make_unique<runner<Fib, Park>>(workers);
}

fj_perf::registrar const seed{fj_perf::fib_competitor{"fj-seed", 10, &make<&fib_seed, false>}};
fj_perf::registrar const join{fj_perf::fib_competitor{"fj-join", 11, &make<&fib_join, false>}};
fj_perf::registrar const seed_park{
    fj_perf::fib_competitor{"fj-seed+park", 12, &make<&fib_seed, true>}};
fj_perf::registrar const join_park{
    fj_perf::fib_competitor{"fj-join+park", 13, &make<&fib_join, true>}};

} // namespace
