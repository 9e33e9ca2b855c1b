// The live schedulers of the process, by id. A future state remembers its scheduler as an id, not
// a pointer, because the future may outlive the scheduler: then() on a ready future looks the id
// up here and queues the continuation there only if that scheduler still exists
// (docs/design.md#then). Only that cold path takes the lock; nothing on a fork, a join or a task
// run touches it.
#pragma once

#include <cstdint>

#include <forkjoin/detail/function_ref.hpp>

namespace fj {
class scheduler;
} // namespace fj

namespace fj::detail {

// A fresh id, never 0 and never handed out twice in this process.
std::uint64_t next_scheduler_id() noexcept;

// Called by a scheduler's constructor once it is fully built (may throw std::bad_alloc) and by its
// destructor before it shuts down.
void register_scheduler(std::uint64_t id, scheduler* s);
void unregister_scheduler(std::uint64_t id) noexcept;

// Calls fn(s) on the live scheduler with this id, holding the registry's lock so s cannot be
// destroyed meanwhile, and returns what fn returned; false if there is no such scheduler. fn must
// not create or destroy a scheduler.
bool with_live_scheduler(std::uint64_t id, function_ref<bool(scheduler&)> fn);

// For the fork() handlers (process_fork.cpp): the child must not inherit the lock held.
void lock_scheduler_registry() noexcept;
void unlock_scheduler_registry() noexcept;

} // namespace fj::detail
