// The observation points of runtime/src (docs/tracing.md#observers); those of the inline paths
// are in <forkjoin/detail/observe.hpp>. events.cpp hands each event to the observers it
// concerns: a pool's trace session and whole-run profile, the profiler's current frame.
#pragma once

#include "state/pool.hpp"

#include <cstddef>
#include <cstdint>

#include <forkjoin/detail/observe.hpp>
#include <forkjoin/detail/park_reason.hpp>
#include <forkjoin/options.hpp>

namespace fj::detail {

struct profile_frame;
enum class spare_reason : std::uint32_t; // rescue.hpp

// Fills in the observers' settings left to the environment: the trace file (FJ_TRACE) and
// whole-run profiling (FJ_PROFILE). Throws std::invalid_argument for a bad FJ_PROFILE.
void resolve_observer_options(scheduler_options& options);

// Parking (above) queues a parked task's record like a task, with this run function; counters and
// traces leave such records out. Set by every pool that parks, before its workers start.
void set_resumption_run(task::run_fn run) noexcept;

// A pool starts, before its workers do: creates the observers its options ask for (trace
// buffers for its workers, a whole-run profile). Throws std::bad_alloc.
void start_observing(pool& p);
// A pool has stopped and its workers are joined (which ordered all their events before this):
// its observers report (the trace file, the whole-run profile line) and end.
void stop_observing(pool& p) noexcept;
// A pool that never ran (its start failed) ends its observers without reports.
void abandon_observing(pool& p) noexcept;

// Events on the worker loop's paths: a worker's own events, which only its pool's trace session
// follows; each caller tests worker::observed() first.
void on_steal(worker& thief, const worker& victim) noexcept;
void on_take_injected(worker& w, const task* t) noexcept;
void on_sleep_begin(worker& w) noexcept;
void on_sleep_end(worker& w) noexcept;

// A new slot (a spare's, rescue.hpp, or a caller's, callers.hpp), before it joins the pool's
// worker set: its trace buffer (throws std::bad_alloc).
void on_slot_added(pool& p, worker& w);
// Spare workers (rescue.hpp): a spare's thread starts (recorded by the starter, before the thread
// exists) and retires (recorded by the spare itself).
void on_spare_start(worker& w, spare_reason reason) noexcept;
void on_spare_retire(worker& w) noexcept;

// A task parks on its fiber: what the observers set aside (the trace slices it leaves open, the
// profiler's frames, which live on the parked stack) until it resumes, maybe on another worker.
struct parked_observation {
    bool active = false;
    std::uint32_t open_slices = 0;
    profile_frame* frames = nullptr;
};
parked_observation on_park(worker& w, park_reason why) noexcept;
void on_resume(worker& w, const parked_observation& parked, std::size_t parked_on) noexcept;

} // namespace fj::detail
