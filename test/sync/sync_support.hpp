// What the task-parking primitives' tests share.
#pragma once

#include "support.hpp"

#include <cstdint>

#include <forkjoin/scheduler.hpp>

namespace fj_test {

// Whether the pool's waiting tasks park (FJ_PARKING=0 turns it off; then they block their
// threads and the rescue starts spares).
inline bool parks(fj::scheduler& pool) {
    return pool.stats().parking;
}

inline std::uint64_t parks_so_far(fj::scheduler& pool) {
    return pool.stats().total().parks;
}

inline std::uint64_t spares_started(fj::scheduler& pool) {
    return pool.stats().spares_started;
}

// Waits (yielding) until the pool has parked `n` tasks in all; a test failure if it does not.
inline void expect_parks_reach(fj::scheduler& pool, std::uint64_t n) {
    EXPECT_TRUE(spin_until([&] { return parks_so_far(pool) >= n; }))
        << "parks: " << parks_so_far(pool) << " of " << n;
}

} // namespace fj_test
