// Helping while waiting (helping.cpp): the waits of fork_join.hpp and blocking_wait.cpp run tasks
// of the pool they wait on. (help_until and run_forked_above, the inline paths' entry points, are
// declared in <forkjoin/detail/pool_core.hpp>.)
#pragma once

#include "state/pool.hpp"

#include <forkjoin/detail/function_ref.hpp>

namespace fj::detail {

// On a worker: runs the tasks at the front of the calling worker's own deque (the ones its
// running frames forked, newest first) until done() holds or the deque is empty. The awaited
// child is usually there ("wait inlining"); nothing stolen or injected runs on top.
bool run_own_until(function_ref<bool()> done);
// On one of p's workers: runs its tasks (any it can find) until done() holds.
void help_on_worker(pool& p, function_ref<bool()> done);
// On one of p's threads: runs its tasks while there are any to take, until done() holds or none
// has turned up for a short while; returns done().
bool help_while_work(pool& p, function_ref<bool()> done);
// Outside every pool: runs one task of p's, if there is one.
bool run_one_outside(pool& p);
// scheduler::try_run_one().
bool try_run_one(pool& p);

} // namespace fj::detail
