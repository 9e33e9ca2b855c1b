// fib on forkjoin, in the two styles users write: the seed's fork + reschedule_until, and the
// structured, allocation-free join; each with waiting tasks parked on fibers ("+park") and with
// help-while-waiting, so the fast-path cost of parking is an interleaved A/B in one run.
#include "competitors/competitor.hpp"
#include "forkjoin_common.hpp"

#include <memory>
#include <string>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_perf::fib_join;
using fj_perf::fib_seed;

template <long (*Fib)(fj::scheduler&, int, int), bool Park>
class runner final : public fj_perf::fib_runner {
public:
    explicit runner(int workers) : m_pool(fj_perf::pool_options(workers, Park)) {}
    long fib(int n, int cutoff) override {
        return m_pool.submit([this, n, cutoff] { return Fib(m_pool, n, cutoff); }).get();
    }
    std::string stats() override { return fj_perf::pool_counters(m_pool); }

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
