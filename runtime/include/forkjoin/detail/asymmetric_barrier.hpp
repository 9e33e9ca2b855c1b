// An asymmetric StoreLoad barrier pair (Linux membarrier(2)), for the sleep protocol and for
// the race between starting a task and cancelling it (completion.hpp).
//
// The sleep protocol is a Dekker pair: a worker pushing work must not miss a worker that is going
// to sleep, and the sleeper must not miss the work (docs/design/sleep.md). The textbook form puts a
// full barrier on both sides; on the push side that is a locked instruction on every fork. Pushes
// are frequent and sleeps rare, so the cost is moved to the sleeper: it calls heavy_barrier(),
// which makes every running thread of the process execute a full memory barrier, while the pusher
// only needs light_barrier(), a compiler barrier that keeps its store before its load in program
// order. Either the pusher's load of the sleeper count comes after the sleeper's barrier point on
// its CPU (then it sees the sleeper), or its store was already globally visible when the barrier
// returned (then the sleeper's re-check sees the work). The same technique is used by liburcu and
// folly (asymmetricHeavyBarrier).
//
// This lies outside the C++ memory model, which ThreadSanitizer checks, so TSan builds (and
// kernels without MEMBARRIER_CMD_PRIVATE_EXPEDITED) use the symmetric seq_cst formulation instead:
// chase_lev_deque::push_seq_cst() + the seq_cst prewait. The choice is made once per process;
// FJ_SYMMETRIC_BARRIER=1 in the environment forces the symmetric formulation.
#pragma once

#include <atomic>

namespace fj::detail {

// True when heavy_barrier() works (registered with the kernel on first call; every scheduler's
// constructor makes that call).
bool asymmetric_barrier_available() noexcept;

// Set once, when asymmetric_barrier_available() has registered: from then on it returns true.
// For hot paths that skip their hardware barrier only when the other side will pay for it; one
// that reads false uses the symmetric formulation, which is correct against either other side.
extern std::atomic<bool> g_asymmetric_barrier_registered;

inline bool asymmetric_barrier_registered() noexcept {
    // relaxed: true implies the registration is complete (it is stored after it, and the other
    // side calls asymmetric_barrier_available(), which waits for the one-time initialisation).
    return g_asymmetric_barrier_registered.load(std::memory_order_relaxed);
}

// The sleeper's side: a full barrier on every CPU running a thread of this process.
void heavy_barrier() noexcept;

// The pusher's side: order our earlier store before our later load as far as the compiler goes;
// heavy_barrier() supplies the hardware barrier when it matters.
inline void light_barrier() noexcept {
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

} // namespace fj::detail
