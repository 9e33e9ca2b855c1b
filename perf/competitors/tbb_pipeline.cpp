// The square pipeline with tbb::parallel_pipeline, in an arena of `workers` slots.
#include "pipeline_workload.hpp"

#include <memory>
#include <sstream>

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

namespace {

fj_perf::pipeline_runner make(int workers) {
    auto arena = std::make_shared<tbb::task_arena>(workers);
    return [arena](const std::string& text, int tokens, int work) {
        std::istringstream in(text);
        std::string out;
        arena->execute([&] {
            tbb::parallel_pipeline(
                static_cast<std::size_t>(tokens),
                tbb::make_filter<void, long long>(tbb::filter_mode::serial_in_order,
                                                  [&](tbb::flow_control& fc) -> long long {
                                                      long long x = 0;
                                                      if (!(in >> x))
                                                          fc.stop();
                                                      return x;
                                                  }) &
                    tbb::make_filter<long long, std::string>(
                        tbb::filter_mode::parallel,
                        [work](long long x) { return fj_perf::square_item(x, work); }) &
                    tbb::make_filter<std::string, void>(tbb::filter_mode::serial_in_order,
                                                        [&](const std::string& s) { out += s; }));
        });
        return out;
    };
}

const fj_perf::pipeline_registrar reg{{"tbb", &make}};

} // namespace
