// The process-wide registry of stack guard ranges: every fiber stack's guard (stack_pool.cpp
// registers each stack it maps) and the end of each worker thread's own stack
// (thread_stack_guard). A SIGSEGV handler reads it without locks (address_in_stack_guard), to tell
// a stack overflow from other faults (overflow_handler.hpp). Writers take one mutex; readers take
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace fj::detail {

// Guards are recorded in units of k_guard_unit bytes: a guard's base must be a multiple of it and
// its length at most k_guard_max_units of them (guard_registry.cpp packs both into one word).
inline constexpr std::uintptr_t k_guard_unit = 4096;
inline constexpr std::uintptr_t k_guard_max_units = k_guard_unit - 1;
// The slot of a range that was not registered (the registry was full).
inline constexpr std::uint32_t k_no_guard_slot = std::numeric_limits<std::uint32_t>::max();

// True if `address` lies in the guard area of a stack that some stack_pool of this process has
// mapped and not yet unmapped. Async-signal-safe (lock-free atomic loads only; no allocation, no
// locks), for a SIGSEGV handler. The registry holds 65536 stacks (more than vm.max_map_count
// allows: 2 VMAs per stack); stacks mapped while it is full are not registered, and this returns
// false for their guards. A guard unmapped concurrently with the call may be reported either way.
bool address_in_stack_guard(const void* address) noexcept;

// Registers [base, base + guard_bytes) (see k_guard_unit) and returns its slot, or
// k_no_guard_slot if the registry is full. Takes the registry's lock: not for a signal handler.
std::uint32_t register_stack_guard(std::uintptr_t base, std::size_t guard_bytes) noexcept;
// Removes the range in `slot` (k_no_guard_slot: nothing). Call it before the range is unmapped:
// the address range may be mapped again right after.
void unregister_stack_guard(std::uint32_t slot) noexcept;

// For the fork() handlers: the child must not inherit the guard registry's lock held.
void lock_guard_registry() noexcept;
void unlock_guard_registry() noexcept;

// Registers the calling thread's own stack end with the same registry while it lives, so that a
// task overflowing a worker thread's stack (parking off, or a worker whose loop fiber could not be
// made) is named too: the lowest usable page and the 64 KiB below it (the thread library's guard
// and whatever a large frame can jump to). Best effort: registers nothing if the thread's stack
// cannot be found or the registry is full.
class thread_stack_guard {
public:
    thread_stack_guard() noexcept;
    ~thread_stack_guard();
    thread_stack_guard(const thread_stack_guard&) = delete;
    thread_stack_guard& operator=(const thread_stack_guard&) = delete;

private:
    std::uint32_t m_slot;
};

} // namespace fj::detail
