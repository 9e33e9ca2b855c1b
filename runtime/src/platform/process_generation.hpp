// Process fork() generations (docs/design/fork.md). The generation counts the fork()s this
// process is the child of; a scheduler remembers the generation it was created in, and one
// created in an earlier generation has no worker threads here (they stayed in the parent).
#pragma once

#include <cstdint>

namespace fj::detail {

std::uint64_t process_generation() noexcept;
// Called by the fork handlers in the child only (lifecycle/process_fork.cpp), while the child has
// a single thread.
void advance_process_generation() noexcept;

} // namespace fj::detail
