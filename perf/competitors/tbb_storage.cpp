// storage_bench with oneTBB: tbb::parallel_scan in its functional form and in its body form
// (fj_perf::prefix_sum_body), each over a blocked_range with the default grain and partitioner, as
// its documentation writes them, and tbb::combinable with local() per key under
// tbb::parallel_for, each in an arena of `workers` slots.
#include "storage_workloads.hpp"

#include <functional>

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_scan.h>
#include <tbb/task_arena.h>

namespace {

class tbb_runner final : public fj_perf::storage_runner {
public:
    explicit tbb_runner(int workers) : m_arena(workers) {}

    void scan(const std::vector<double>& in, std::vector<double>& out) override {
        m_arena.execute([&] {
            tbb::parallel_scan(tbb::blocked_range<std::size_t>(0, in.size()), 0.0,
                               fj_perf::prefix_sum_function{in.data(), out.data()}, std::plus<>{});
        });
    }

    void functional_scan(const std::vector<double>& in, std::vector<double>& out) override {
        scan(in, out);
    }

    double body_scan(const std::vector<double>& in, std::vector<double>& out) override {
        fj_perf::prefix_sum_body body(in.data(), out.data());
        m_arena.execute(
            [&] { tbb::parallel_scan(tbb::blocked_range<std::size_t>(0, in.size()), body); });
        return body.sum;
    }

    fj_perf::histogram count(const std::vector<std::uint32_t>& keys) override {
        tbb::combinable<fj_perf::histogram> per_thread([] { return fj_perf::histogram{}; });
        m_arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, keys.size()),
                              [&](const tbb::blocked_range<std::size_t>& r) {
                                  for (std::size_t i = r.begin(); i != r.end(); ++i)
                                      ++per_thread.local()[keys[i]];
                              });
        });
        return per_thread.combine([](const fj_perf::histogram& a, const fj_perf::histogram& b) {
            fj_perf::histogram s;
            for (std::size_t k = 0; k < fj_perf::k_bins; ++k)
                s[k] = a[k] + b[k];
            return s;
        });
    }

private:
    tbb::task_arena m_arena;
};

const fj_perf::storage_registrar reg{
    {"tbb", [](int workers) -> std::unique_ptr<fj_perf::storage_runner> {
         return std::make_unique<tbb_runner>(workers);
     }}};

} // namespace
