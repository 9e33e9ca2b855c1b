// The central pool behind the per-thread block caches (<forkjoin/detail/block_cache.hpp>): its
// mutex, held across fork() by the fork handlers (lifecycle/process_fork.cpp) so that the child
// never inherits it locked.
#pragma once

namespace fj::detail {

void lock_central_pool() noexcept;
void unlock_central_pool() noexcept;

} // namespace fj::detail
