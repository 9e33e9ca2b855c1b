// The process-wide default scheduler (default_scheduler.cpp): its mutex, held across fork() by the
// fork handlers (process_fork.cpp).
#pragma once

namespace fj::detail {

void lock_default_scheduler() noexcept;
void unlock_default_scheduler() noexcept;

} // namespace fj::detail
