// Where a worker (or a thread helping a pool) finds its next task, and how it runs one
// (find_work.cpp; docs/design/find-work.md).
#pragma once

#include "state/pool.hpp"

#include <cstdint>

namespace fj::detail {

// Runs t on w, with w's pool as the calling thread's current pool.
void run_task(worker& w, task* t) noexcept;

// The next task for w, or nullptr. at_top_level: the caller is a worker's loop with nothing on
// its stack, so it may take a resumable parked task from a worker's m_resumable slot.
task* find_work(pool& p, worker& w, bool at_top_level);

// One pass over the other workers' deques from a victim picked by `random`; self is null for a
// thread outside the pool. at_top_level: as for find_work.
task* steal_from_others(pool& p, worker* self, std::uint64_t random, bool at_top_level);

// A searcher's look between two pauses of its spin: find_work at top level, except that in a pool
// that samples (state/steal_hint.hpp) its steal step probes the steal hint's victim and
// k_sampled_victims random ones instead of every worker.
task* find_work_sampled(pool& p, worker& w);

} // namespace fj::detail
