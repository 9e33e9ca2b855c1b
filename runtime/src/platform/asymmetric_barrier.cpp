// membarrier(2) for the sleep protocol's asymmetric barrier (see asymmetric_barrier.hpp).
#include "platform/environment.hpp"

#include <cstdlib>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <forkjoin/detail/asymmetric_barrier.hpp>

namespace fj::detail {

std::atomic<bool> g_asymmetric_barrier_registered{false};

namespace {

bool register_membarrier() noexcept {
    // FJ_SYMMETRIC_BARRIER=1 forces the seq_cst formulation (environment.hpp).
    if (symmetric_barrier_forced())
        return false;
#if defined(__SANITIZE_THREAD__)
    return false; // TSan checks the C++ model; use the seq_cst formulation it can follow
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return false;
#endif
#endif
#if defined(__NR_membarrier)
    const long supported = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
        return false;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
}

} // namespace

bool asymmetric_barrier_available() noexcept {
    static const bool available = [] { // thread-safe static init, once
        const bool registered = register_membarrier();
        g_asymmetric_barrier_registered.store(registered, std::memory_order_relaxed);
        return registered;
    }();
    return available;
}

void heavy_barrier() noexcept {
#if defined(__NR_membarrier)
    (void)syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}

} // namespace fj::detail
