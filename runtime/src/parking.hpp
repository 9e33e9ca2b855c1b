// Parking waiting tasks on fibers (docs/design.md#parking): the runtime side that the rest of
// src/ calls. Everything that knows about Boost.Context lives in parking.cpp.
#pragma once

#include "pool.hpp"

#include <cstdint>
#include <memory>

#include <forkjoin/detail/completion.hpp>
#include <forkjoin/options.hpp>
#include <forkjoin/stats.hpp>

namespace fj::detail {

// Creates the pool's parking state (parking_lot: stacks, per-worker switch state), or returns null
// when parking is off (options or FJ_PARKING=0).
std::unique_ptr<parking_lot, parking_lot_deleter> make_parking_lot(const scheduler_options& options,
                                                                   std::size_t workers);

// On one of a pool's workers, in its own context: parks the calling task until `c` is
// ready and returns true once it has been resumed (maybe on another worker of the same pool).
// Returns false, having done nothing, where parking is not allowed (off, a foreign context, an
// exception in flight, the cap on parked tasks reached, no memory for a stack): the caller then
// helps while waiting.
bool try_park(completion& c);

// The same conditions; parks the calling task and keeps it on this worker, which resumes it once
// it has run `patience` other tasks (at once if it finds none), so the caller re-checks whatever
// it waits for (reschedule_until with an arbitrary predicate, timed waits) without anything
// running on top of its frame. Returns false, having done nothing, where parking is not allowed.
bool try_yield(std::uint32_t patience = 1);

// Runs w's loop on fibers until the pool stops; false, running nothing, if no loop fiber was made.
bool run_worker_on_fibers(pool& p, worker& w);

// True if t is a parked task's record (queued to resume it): counters and traces leave it out.
bool is_park_record(const task* t) noexcept;

// The fiber counters of a scheduler_stats snapshot.
void add_fiber_stats(const parking_lot& lot, scheduler_stats& stats) noexcept;

} // namespace fj::detail
