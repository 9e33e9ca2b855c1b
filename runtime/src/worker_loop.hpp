// Where workers (and helping threads) find work, how they help while waiting, and how they sleep:
// functions over a pool (worker_loop.cpp; docs/design.md#find-work and #sleep).
#pragma once

#include "pool.hpp"

#include <cstddef>

#include <forkjoin/detail/function_ref.hpp>

namespace fj::detail {

// The body of worker thread `index` of p: runs until the pool stops.
void worker_main(pool& p, std::size_t index);

// Runs t on w, with w's pool as the calling thread's current pool.
void run_task(worker& w, task* t) noexcept;

// The next task for w, or nullptr. at_top_level: the caller is a worker's loop with nothing on
// its stack, so it may take a resumable parked task from a worker's m_resumable slot.
task* find_work(pool& p, worker& w, bool at_top_level);
// The same, sleeping while there is none; nullptr once the pool has stopped (closed, and every
// task finished).
task* find_work_or_sleep(pool& p, worker& w);

// Whether p has work a worker could take: its injection queue, any deque, any resumable slot.
// Exact for the injection queue, a seq_cst look at the rest (docs/design.md#sleep).
bool work_visible(const pool& p);

// The calling thread, counted in p.m_active, stops counting for good (a spare that never
// started); stops the pool if that was the last count of a closed, drained pool.
void leave_active(pool& p) noexcept;

// On a worker: runs the tasks at the front of the calling worker's own deque (the ones its
// running frames forked, newest first) until done() holds or the deque is empty. The awaited
// child is usually there ("wait inlining"); nothing stolen or injected runs on top.
bool run_own_until(function_ref<bool()> done);
// On one of p's workers: runs its tasks (any it can find) until done() holds.
void help_on_worker(pool& p, function_ref<bool()> done);
// Outside every pool: runs one task of p's, if there is one.
bool run_one_outside(pool& p);
// scheduler::try_run_one().
bool try_run_one(pool& p);

} // namespace fj::detail
