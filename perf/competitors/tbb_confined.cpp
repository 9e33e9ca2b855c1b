// confined_bench's workloads on oneTBB: tbb::parallel_for (auto partitioner) over the rows,
// tbb::parallel_invoke for the joins, a tbb::task_group per node for the futures, in a task_arena
// of `workers` slots. A global_control lets oneTBB keep `workers` threads even when the affinity
// mask has fewer CPUs (its default caps its threads there); it is process-wide (the smallest
// live one wins), so it lives only around each timed call.
#include "confined_workloads.hpp"

#include <optional>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

namespace {

using namespace fj_perf::confined;

long fib_join(int n) {
    if (n < 2)
        return n;
    long a = 0, b = 0;
    tbb::parallel_invoke([&] { a = fib_join(n - 1); }, [&] { b = fib_join(n - 2); });
    return a + b;
}

long fib_future(int n) {
    if (n < 2)
        return n;
    long a = 0;
    tbb::task_group g;
    g.run([&] { a = fib_future(n - 1); });
    const long b = fib_future(n - 2);
    g.wait();
    return a + b;
}

class tbb_runner final : public confined_runner {
public:
    explicit tbb_runner(int workers) : m_workers(workers), m_arena(workers) {}

    void before_run() override {
        m_limit.emplace(tbb::global_control::max_allowed_parallelism,
                        static_cast<std::size_t>(m_workers));
    }
    void after_run() override { m_limit.reset(); }

    std::uint64_t seismic(const seismic_size& s) override {
        std::vector<std::uint64_t> prev = seismic_initial(s.rows), next(prev.size());
        m_arena.execute([&] {
            for (int f = 0; f < s.frames; ++f) {
                tbb::parallel_for(tbb::blocked_range<std::size_t>(0, prev.size()),
                                  [&](const tbb::blocked_range<std::size_t>& r) {
                                      for (std::size_t i = r.begin(); i != r.end(); ++i)
                                          seismic_step(prev, next, i, s.row_work);
                                  });
                prev.swap(next);
            }
        });
        return seismic_checksum(prev);
    }
    long fib_join(int n) override {
        return m_arena.execute([&] { return ::fib_join(n); });
    }
    long fib_future(int n) override {
        return m_arena.execute([&] { return ::fib_future(n); });
    }

private:
    int m_workers;
    tbb::task_arena m_arena;
    std::optional<tbb::global_control> m_limit;
};

const confined_registrar reg{{"tbb", [](int workers) -> std::unique_ptr<confined_runner> {
                                  return std::make_unique<tbb_runner>(workers);
                              }}};

} // namespace
