// The one place that tells the sanitizers about stack switches (docs/design.md#parking).
//
// Boost.Context switches stacks in assembly that ThreadSanitizer and AddressSanitizer cannot see.
// Unannotated, TSan's per-thread shadow call stack goes out of balance when a fiber migrates
// (false reports, crashes inside TSan: fibers study §4), and ASan takes a fiber stack for a
// corrupted native stack when something throws on it. Every switch in the runtime therefore goes
// through before_switch() on the side that leaves and after_switch() on the side that arrives:
//   TSan: one TSan fiber per fiber stack (created with the stack, destroyed with it), switched to
//         just before the jump;
//   ASan: __sanitizer_start_switch_fiber with the target's bounds before the jump (no fake-stack
//         slot when the leaving fiber is exiting for good), __sanitizer_finish_switch_fiber after.
// In builds without sanitizers every function here is empty.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define FJ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FJ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FJ_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FJ_TSAN 1
#endif
#endif

#if defined(FJ_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(FJ_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace fj::detail {

// What the sanitizers need to know about one execution context (a fiber stack or a worker's
// native stack).
struct fiber_info {
    void* tsan_fiber = nullptr;         // TSan's context for it
    const void* stack_bottom = nullptr; // lowest usable address (ASan)
    std::size_t stack_size = 0;
    void* asan_fake_stack = nullptr; // ASan's save slot while it is switched out
};

inline constexpr bool k_tsan =
#if defined(FJ_TSAN)
    true;
#else
    false;
#endif

// A fresh context for a new fiber stack; released by destroy_sanitizer_context().
inline void init_sanitizer_context(fiber_info& info, const void* bottom,
                                   std::size_t size) noexcept {
    info.stack_bottom = bottom;
    info.stack_size = size;
#if defined(FJ_TSAN)
    info.tsan_fiber = __tsan_create_fiber(0);
#endif
}

inline void destroy_sanitizer_context(fiber_info& info) noexcept {
#if defined(FJ_TSAN)
    if (info.tsan_fiber != nullptr)
        __tsan_destroy_fiber(info.tsan_fiber);
    info.tsan_fiber = nullptr;
#else
    (void)info;
#endif
}

// The calling thread's own context (its native stack), recorded before its first switch.
inline void capture_native_context(fiber_info& info) noexcept {
#if defined(FJ_TSAN)
    info.tsan_fiber = __tsan_get_current_fiber();
#else
    (void)info;
#endif
}

// Just before jumping from `from` (null: the leaving fiber exits for good) to `to`.
inline void before_switch(fiber_info* from, const fiber_info& to) noexcept {
#if defined(FJ_ASAN)
    __sanitizer_start_switch_fiber(from != nullptr ? &from->asan_fake_stack : nullptr,
                                   to.stack_bottom, to.stack_size);
#else
    (void)from;
#endif
#if defined(FJ_TSAN)
    __tsan_switch_to_fiber(to.tsan_fiber, 0);
#else
    (void)to;
#endif
}

// First thing on the arriving side. `self` is the arriving context (null: a fresh fiber, which
// has no fake stack yet). Returns the bounds of the stack we came from through `came_from` when
// it is not null (how a worker learns its native stack's bounds).
inline void after_switch(fiber_info* self, fiber_info* came_from = nullptr) noexcept {
#if defined(FJ_ASAN)
    const void* bottom = nullptr;
    std::size_t size = 0;
    __sanitizer_finish_switch_fiber(self != nullptr ? self->asan_fake_stack : nullptr, &bottom,
                                    &size);
    if (came_from != nullptr) {
        came_from->stack_bottom = bottom;
        came_from->stack_size = size;
    }
#else
    (void)self;
    (void)came_from;
#endif
}

// TSan only: a fiber is created by a jump into its new stack and straight back, inside
// Boost.Context's constructor. Switching TSan to the new fiber's context for that (from the stack
// allocator, which runs just before the jump) records the frame Boost enters there on the new
// fiber's shadow stack, not on ours; the creator switches back afterwards.
inline void* tsan_current() noexcept {
#if defined(FJ_TSAN)
    return __tsan_get_current_fiber();
#else
    return nullptr;
#endif
}
inline void tsan_switch(void* tsan_fiber) noexcept {
#if defined(FJ_TSAN)
    __tsan_switch_to_fiber(tsan_fiber, 0);
#else
    (void)tsan_fiber;
#endif
}

} // namespace fj::detail
