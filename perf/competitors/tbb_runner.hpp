// The loops driver's runner for oneTBB workloads (tbb_loops.cpp, tbb_dc.cpp): every round runs
// inside one task_arena of the requested size.
#pragma once

#include "competitors/loop_competitor.hpp"

#include <memory>

#include <oneapi/tbb/task_arena.h>

namespace fj_perf {

template <double (*Run)(loop_io const&)>
class tbb_runner final : public loop_runner {
public:
    explicit tbb_runner(int workers) : m_arena(workers) { m_arena.initialize(); }
    double run(loop_io const& io) override {
        return m_arena.execute([&io] { return Run(io); });
    }

private:
    oneapi::tbb::task_arena m_arena;
};

template <double (*Run)(loop_io const&)>
std::unique_ptr<loop_runner> make_tbb_runner(int workers) {
    return std::make_unique<tbb_runner<Run>>(workers);
}

} // namespace fj_perf
