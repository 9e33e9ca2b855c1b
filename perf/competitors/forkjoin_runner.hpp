// The loops driver's runner for forkjoin workloads (forkjoin_loops.cpp, forkjoin_dc.cpp): one
// scheduler of the requested size, kept across rounds, whose counters the driver prints.
#pragma once

#include "competitors/loop_competitor.hpp"
#include "forkjoin_common.hpp"

#include <cstddef>
#include <memory>
#include <string>

#include <forkjoin/scheduler.hpp>

namespace fj_perf {

template <double (*Run)(fj::scheduler&, loop_io const&)>
class forkjoin_runner final : public loop_runner {
public:
    explicit forkjoin_runner(int workers) : m_pool(static_cast<std::size_t>(workers)) {}
    double run(loop_io const& io) override { return Run(m_pool, io); }
    std::string stats() override { return pool_counters(m_pool); }

private:
    fj::scheduler m_pool;
};

template <double (*Run)(fj::scheduler&, loop_io const&)>
std::unique_ptr<loop_runner> make_forkjoin_runner(int workers) {
    return std::make_unique<forkjoin_runner<Run>>(workers);
}

} // namespace fj_perf
