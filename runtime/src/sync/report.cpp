// How the task-parking primitives report misuse that has no caller to throw to.
#include <cstdio>
#include <cstdlib>

#include <forkjoin/detail/sync_waiter.hpp>

namespace fj::detail {

void report_destroyed_with_waiters(const char* primitive) noexcept {
    std::fprintf(stderr,
                 "forkjoin: %s destroyed while a task or thread waits for it "
                 "(docs/errors.md#task-parking-primitives)\n",
                 primitive);
    std::abort();
}

} // namespace fj::detail
