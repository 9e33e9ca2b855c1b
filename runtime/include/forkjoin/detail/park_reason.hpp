// What a parked task waits for: a result (future, join, task group) or a task-parking primitive
// (docs/sync.md); counted in worker_stats::sync_parks and named on the trace's park events.
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
    shared_mutex,
};

} // namespace fj::detail
