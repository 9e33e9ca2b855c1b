// Test hooks that make the runtime's resource acquisitions fail on demand, so tests can check
// that exhaustion surfaces as a clean exception with no task lost or run twice
// (docs/reliability.md).
//
//   fj::detail::fault_injection::arm(site::task_allocation, /*skip=*/10, /*fail=*/1);
//
// Disarmed (the normal state) the cost is one relaxed load of a flag that is never written, on
// the task allocation path; the other sites are cold (thread start, deque growth).
#pragma once

#include <atomic>

namespace fj::detail::fault_injection {

enum class site {
    thread_start,    // starting a worker thread: std::system_error (resource_unavailable_try_again)
    task_allocation, // a task block for fork/submit/then: std::bad_alloc
    deque_growth,    // a bigger ring for a full deque: std::bad_alloc
};

// After `skip` more successful attempts at `where`, the next `fail` attempts fail.
void arm(site where, int skip, int fail) noexcept;
void disarm() noexcept;

// Throws if an armed fault is due at `where`. Called by the runtime.
void check_slow(site where);

extern std::atomic<bool> g_armed;

inline void check(site where) {
    // relaxed: tests arm before they start the work that should fail.
    if (g_armed.load(std::memory_order_relaxed)) [[unlikely]]
        check_slow(where);
}

} // namespace fj::detail::fault_injection
