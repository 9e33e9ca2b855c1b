// The sieve body with oneTBB's parallel_reduce(range, body), auto_partitioner, in an arena of
// `workers` slots.
#include "primes_workload.hpp"

#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

namespace {

using body = fj_perf::sieve_body<tbb::blocked_range<long>, tbb::split>;

std::function<fj_perf::primes_result(long)> make(int workers) {
    auto arena = std::make_shared<tbb::task_arena>(workers);
    return [arena](long n) {
        const long root = fj_perf::isqrt(n);
        const std::vector<long> primes = fj_perf::small_primes(root);
        body b(primes);
        arena->execute([&] {
            tbb::parallel_reduce(tbb::blocked_range<long>(root + 1, n + 1, fj_perf::k_primes_grain),
                                 b);
        });
        return fj_perf::primes_result{static_cast<long>(primes.size()) + b.count(), b.restarts(),
                                      b.bodies()};
    };
}

const fj_perf::primes_registrar reg{{"tbb body reduce", &make}};

} // namespace
