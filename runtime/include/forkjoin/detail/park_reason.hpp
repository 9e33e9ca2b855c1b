// What a parked task waits for: a result (a future, a join, a task group), or one of the
// task-parking primitives (docs/sync.md). Counted in the statistics (worker_stats::sync_parks)
// and named on the trace's park events.
#pragma once

#include <cstdint>

namespace fj::detail {

enum class park_reason : std::uint8_t {
    result,
    mutex,
    condition_variable,
    latch,
    barrier,
    semaphore,
    channel,
    sleep,
};

} // namespace fj::detail
