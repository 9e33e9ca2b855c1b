// The range_split workloads with oneTBB, in an arena of `workers` slots: the overlay body with
// tbb::parallel_reduce(range, body) and its default partitioner (auto_partitioner); the stencil's
// frames with tbb::parallel_for over a blocked_range, with one tbb::affinity_partitioner kept for
// as long as the runner lives, and with the default partitioner.
#include "range_split_workload.hpp"

#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace {

using namespace fj_perf::range_split;

overlay_runner make_overlay(int workers) {
    auto arena = std::make_shared<tbb::task_arena>(workers);
    return [arena](const overlay_input& in) {
        overlay_body<tbb::split> body;
        arena->execute(
            [&] { tbb::parallel_reduce(overlay_range<tbb::split>(in.first, in.second), body); });
        return result_of(body);
    };
}

// Frames over the field, each a parallel_for with `partitioner` (a reference for the affinity
// partitioner, which must outlive the frames; a value for the others).
template <class Partitioner>
void frames(stencil_field& f, int count, Partitioner&& partitioner) {
    const std::size_t cells = f.current.size();
    for (int t = 0; t < count; ++t) {
        const float* previous = f.previous.data();
        const float* current = f.current.data();
        float* next = f.next.data();
        const stencil_field* field = &f;
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, cells),
            [=](const tbb::blocked_range<std::size_t>& r) {
                field->count_piece();
                stencil_cells(previous, current, next, cells, r.begin(), r.end());
            },
            partitioner);
        f.rotate();
    }
}

stencil_runner make_affinity(int workers) {
    auto arena = std::make_shared<tbb::task_arena>(workers);
    auto ap = std::make_shared<tbb::affinity_partitioner>();
    return [arena, ap](stencil_field& f, int count) {
        arena->execute([&] { frames(f, count, *ap); });
    };
}

stencil_runner make_auto(int workers) {
    auto arena = std::make_shared<tbb::task_arena>(workers);
    return [arena](stencil_field& f, int count) {
        arena->execute([&] { frames(f, count, tbb::auto_partitioner{}); });
    };
}

const overlay_registrar reg_overlay{{"tbb", &make_overlay}};
const stencil_registrar reg_affinity{{"tbb affinity", &make_affinity}};
const stencil_registrar reg_auto{{"tbb", &make_auto}};

} // namespace
