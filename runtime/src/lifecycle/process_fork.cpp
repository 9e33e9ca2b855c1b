// Process fork() safety (docs/design/fork.md).
//
// After fork() the child has one thread: the one that called fork(). Every scheduler created
// before has worker threads only in the parent, so in the child:
//   - the default scheduler is replaced by a fresh one on first use (default_scheduler.cpp);
//   - submitting to any other pre-fork scheduler throws std::logic_error saying so, instead of
//     queuing work nobody will run (the classic hang of OpenMP and TBB under multiprocessing);
//   - destroying a pre-fork scheduler does not join threads that do not exist.
// The handlers hold the runtime's process-wide mutexes across fork(), so the child never
// inherits one locked by a thread that is not there.
#include "lifecycle/process_fork.hpp"

#include "budget/cpu_budget.hpp"
#include "fibers/guard_registry.hpp"
#include "lifecycle/default_scheduler.hpp"
#include "lifecycle/pool_registry.hpp"
#include "memory/central_pool.hpp"
#include "platform/process_generation.hpp"
#include "timers/timers.hpp"

#include <pthread.h>

namespace fj::detail {
namespace {

// Lock order: the default scheduler's mutex, then the scheduler registry's (creating the default
// scheduler registers it under the first), then the central pool's (creating the default
// scheduler allocates from the pool under the first; the registry's holder never allocates from
// the pool). The fiber stacks' guard registry comes last: it is taken alone, when a stack is
// mapped or unmapped.
void before_fork() noexcept {
    // Made now if it was not yet: no thread is then inside its first use across the fork.
    try {
        cpu_budget::prepare_for_fork();
    } catch (...) { // out of memory: a child that uses the budget makes its own
    }
    lock_default_scheduler();
    lock_pool_registry();
    lock_central_pool();
    lock_guard_registry();
}

void after_fork_in_parent() noexcept {
    unlock_guard_registry();
    unlock_central_pool();
    unlock_pool_registry();
    unlock_default_scheduler();
}

void after_fork_in_child() noexcept {
    advance_process_generation();
    cpu_budget::replace_in_child(); // the parent's holders and sleepers are not here
    timers::replace_in_child();     // nor its timer thread
    unlock_guard_registry();        // locked by this very thread in before_fork()
    unlock_central_pool();
    unlock_pool_registry();
    unlock_default_scheduler();
}

} // namespace

void install_fork_handlers() {
    static const int installed =
        pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    (void)installed; // fails only with ENOMEM; then fork() safety is lost, nothing else
}

} // namespace fj::detail
