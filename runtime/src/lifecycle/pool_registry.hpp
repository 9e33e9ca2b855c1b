// The live pools of the process, by id. A future state remembers its pool as an id, not a pointer,
// because the future may outlive the pool: then() on a ready future looks the id up here and
// queues the continuation there only if that pool still exists
// (docs/design/composition.md#where-a-ready-antecedents-continuation-goes). Only that cold path
// takes the lock; nothing on a fork, a join or a task run touches it.
#pragma once

#include <cstdint>

#include <forkjoin/detail/function_ref.hpp>

namespace fj::detail {

struct pool_core;

// A fresh id, never 0 and never handed out twice in this process.
std::uint64_t next_pool_id() noexcept;

// Called once a pool is fully built (may throw std::bad_alloc), and before it shuts down.
void register_pool(pool_core& p);
void unregister_pool(std::uint64_t id) noexcept;

// Calls fn(p) on the live pool with this id, holding the registry's lock so p cannot be destroyed
// meanwhile, and returns what fn returned; false if there is no such pool. fn must not create or
// destroy a pool.
bool with_live_pool(std::uint64_t id, function_ref<bool(pool_core&)> fn);

// For the fork() handlers (process_fork.cpp): the child must not inherit the lock held.
void lock_pool_registry() noexcept;
void unlock_pool_registry() noexcept;

} // namespace fj::detail
