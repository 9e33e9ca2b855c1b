// The A* search with oneTBB (astar_workload.hpp): the helpers run on a tbb::task_group in a
// task_arena of `workers` slots, under a global_control of `workers` threads (process-wide: it
// lives as long as the runner, one worker count at a time).
#include "astar_workload.hpp"

#include <memory>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

namespace {

using namespace fj_perf::astar;

runner make(int workers) {
    auto limit = std::make_shared<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                       static_cast<std::size_t>(workers));
    auto arena = std::make_shared<tbb::task_arena>(workers);
    return [limit, arena](const graph& gr) {
        return arena->execute([&] {
            tbb::task_group group;
            parallel_search<tbb::task_group> search(gr, group);
            return search.run();
        });
    };
}

const registrar reg{{"tbb", &make}};

} // namespace
