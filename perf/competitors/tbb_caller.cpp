// caller_bench's calls on oneTBB. For "N threads" a oneTBB user makes a tbb::task_arena(N) once
// and runs each parallel call through arena.execute(): the arena is the scoped handle to N slots
// that matches an fj::scheduler of N workers (a tbb::global_control would limit the whole
// process instead). So every call from main is one execute() around one algorithm:
// tbb::parallel_invoke(a, b), tbb::parallel_for(0, 256, f), and for the power steps the
// functional tbb::parallel_reduce and a tbb::parallel_for, both over a blocked_range (their
// default auto_partitioner). The arena reserves one of its N slots for the caller, so at N = 1
// main runs everything alone; oneTBB starts at most one thread fewer than the CPUs, so N above
// the CPU count gets no more workers.
#include "caller_workloads.hpp"

#include <functional>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

namespace {

using namespace fj_perf::caller;

class tbb_runner final : public caller_runner {
public:
    explicit tbb_runner(int workers) : m_arena(workers) {}

    void join(int calls) override {
        for (int c = 0; c < calls; ++c)
            m_arena.execute([] { tbb::parallel_invoke([] {}, [] {}); });
    }

    void loop(int calls, int* marks) override {
        for (int c = 0; c < calls; ++c)
            m_arena.execute(
                [&] { tbb::parallel_for(0, k_loop_size, [&](int i) { marks[i] += 1; }); });
    }

    double power(std::vector<double>& x, int iterations) override {
        using range = tbb::blocked_range<std::size_t>;
        double total = 0;
        for (int it = 0; it < iterations; ++it) {
            const double sum = m_arena.execute([&] {
                return tbb::parallel_reduce(
                    range(0, x.size()), 0.0,
                    [&](const range& r, double acc) {
                        for (std::size_t i = r.begin(); i != r.end(); ++i)
                            acc += x[i];
                        return acc;
                    },
                    std::plus<>{});
            });
            m_arena.execute([&] {
                tbb::parallel_for(range(0, x.size()), [&](const range& r) {
                    for (std::size_t i = r.begin(); i != r.end(); ++i)
                        x[i] = x[i] * k_scale + k_shift;
                });
            });
            total += sum;
        }
        return total;
    }

private:
    tbb::task_arena m_arena;
};

const caller_registrar reg{
    {"tbb", "task_arena(N).execute(...) around parallel_invoke / parallel_for / parallel_reduce",
     [](int workers) -> std::unique_ptr<caller_runner> {
         return std::make_unique<tbb_runner>(workers);
     }}};

} // namespace
