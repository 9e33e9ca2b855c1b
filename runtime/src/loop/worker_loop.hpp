// The worker loop (worker_loop.cpp; docs/design/find-work.md): the one loop every worker and
// spare runs, on its own stack or on parking's loop fibers.
#pragma once

#include "state/pool.hpp"

#include <cstddef>

namespace fj::detail {

// The body of worker thread `index` of p (a spare's too): runs until the pool stops, or, for a
// spare, until it retires.
void worker_main(pool& p, std::size_t index);

// The loop itself, on the calling worker (its current_worker()): runs the tasks it finds,
// sleeping while there are none, until the pool stops, a spare retires, or parking ends the loop
// fiber it runs on (end_loop_task()). Parking's loop fibers run it (parking.hpp's loop_body).
void run_worker_loop(pool& p) noexcept;

// The calling thread, counted in p.m_active, stops counting for good (a spare that never
// started); stops the pool if that was the last count of a closed, drained pool.
void leave_active(pool& p) noexcept;

} // namespace fj::detail
