// The one place that switches stacks, and so the one place that tells the sanitizers about it
// (docs/design/fiber-switches.md).
//
// A switch is Boost.Context's fcontext primitives, called directly: make_fcontext prepares a
// fresh stack, jump_fcontext saves the caller's registers and resumes another context,
// ontop_fcontext does the same and first runs a function on the target's stack. They are the
// assembly functions that libboost_context exports (boost::context::fiber is a header-only
// wrapper over them). ThreadSanitizer and AddressSanitizer cannot see them, so every switch
// goes through switch_to() or exit_to() below, which annotate it:
//   TSan: one TSan fiber per fiber stack, switched to immediately before the jump: nothing
//         instrumented runs between the two, so every function entry TSan records on a fiber's
//         shadow call stack is matched by its exit on the same fiber (the invariant; a broken one
//         corrupts TSan's shadow stack, which is how boost::context::fiber's inline wrappers,
//         instrumented and inlined differently at each optimisation level, crashed TSan at -O2).
//         A fiber's entry function never returns, so it and exit_to() record no frame
//         (FJ_NO_TSAN_FRAME) and the shadow stack is empty again when the fiber ends. Under g++
//         the stack keeps its TSan fiber from its mapping to its unmapping, and the fibers that
//         run on it in turn share it (see k_tsan_fiber_per_mapping);
//   ASan: __sanitizer_start_switch_fiber with the target's bounds before the jump (no fake-stack
//         slot when the leaving fiber ends for good), __sanitizer_finish_switch_fiber after; and
//         a fiber that ends clears the poison of its frames that never return (its entry
//         function's), so no stale redzone is left on a stack that is reused or unmapped.
// In builds without sanitizers the annotations are empty.
#pragma once

#include <cstddef>

#include <boost/context/detail/fcontext.hpp>

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
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(FJ_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

// On a function that enters a fiber and never returns: TSan records no frame for it, and
// instruments nothing in it (so it does no more than switch). g++ only: clang records the frames
// of uninstrumented functions too, and there a TSan fiber is created per fiber anyway.
#if defined(FJ_TSAN) && !defined(__clang__)
#define FJ_NO_TSAN_FRAME __attribute__((no_sanitize_thread))
#else
#define FJ_NO_TSAN_FRAME
#endif

namespace fj::detail {

// What the sanitizers need to know about one execution context (a fiber stack or a worker's
// native stack).
struct fiber_info {
    void* tsan_fiber = nullptr;         // TSan's context for it
    bool owns_tsan_fiber = false;       // destroyed with this record (else the stack's)
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

// Whether each stack mapping keeps one TSan fiber for its life (stack_pool), which the fibers run
// on it in turn share. g++ 12's TSan runtime takes about 13 ms to create a fiber (clang 14's about
// 0.04 ms; 200 creations, 2-core machine), so under g++ a fiber per park made every park cost that
// much. Sharing is sound: the fibers on one stack are ordered anyway (a stack passes from one
// fiber's end to the next one's start only through the pool's hand-off, which synchronizes), so
// TSan learns no order the program lacks; and each fiber leaves the shadow call stack as it found
// it (FJ_NO_TSAN_FRAME).
inline constexpr bool k_tsan_fiber_per_mapping =
#if defined(FJ_TSAN) && !defined(__clang__)
    true;
#else
    false;
#endif

// The TSan fiber of a new stack mapping (null unless k_tsan_fiber_per_mapping), and its end.
inline void* create_mapping_tsan_fiber() noexcept {
#if defined(FJ_TSAN)
    if constexpr (k_tsan_fiber_per_mapping)
        return __tsan_create_fiber(0);
#endif
    return nullptr;
}

inline void destroy_mapping_tsan_fiber(void* tsan_fiber) noexcept {
#if defined(FJ_TSAN)
    if (tsan_fiber != nullptr)
        __tsan_destroy_fiber(tsan_fiber);
#else
    (void)tsan_fiber;
#endif
}

// A fresh context for a fiber about to run on a stack; released by destroy_sanitizer_context().
// `mapping_tsan_fiber` is the stack's own TSan fiber (create_mapping_tsan_fiber()), or null: then
// the context gets a TSan fiber of its own.
inline void init_sanitizer_context(fiber_info& info, const void* bottom, std::size_t size,
                                   void* mapping_tsan_fiber = nullptr) noexcept {
    info.stack_bottom = bottom;
    info.stack_size = size;
#if defined(FJ_TSAN)
    info.owns_tsan_fiber = mapping_tsan_fiber == nullptr;
    info.tsan_fiber = info.owns_tsan_fiber ? __tsan_create_fiber(0) : mapping_tsan_fiber;
#else
    (void)mapping_tsan_fiber;
#endif
}

inline void destroy_sanitizer_context(fiber_info& info) noexcept {
#if defined(FJ_TSAN)
    if (info.owns_tsan_fiber && info.tsan_fiber != nullptr)
        __tsan_destroy_fiber(info.tsan_fiber);
    info.tsan_fiber = nullptr;
    info.owns_tsan_fiber = false;
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

// Just before jumping from `from` (null: the leaving fiber exits for good) to `to`. Records no
// TSan frame (FJ_NO_TSAN_FRAME): the frame would be entered on one fiber and left on the other.
FJ_NO_TSAN_FRAME inline void before_switch(fiber_info* from, const fiber_info& to) noexcept {
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

namespace fcontext = boost::context::detail;
using context_handle = fcontext::fcontext_t; // a suspended context (null: none)
using transfer = fcontext::transfer_t;       // what a jump delivers: the context left, and data

// A fresh context on the stack whose usable part ends at `top` (highest address, 16-aligned) and
// is `size` bytes long; `entry` runs when it is first switched to, with the switcher's context
// and data, and must never return (it ends with exit_to()). Runs nothing, switches nothing.
inline context_handle make_context(void* top, std::size_t size, void (*entry)(transfer)) noexcept {
    return fcontext::make_fcontext(top, size, entry);
}

// Suspends the calling context (described by `self`) and resumes `to` (described by `to_info`),
// handing it `data`; returns once another context switches back here, with what it handed over.
// The TSan switch is the last call before the jump and the ASan finish the first after it.
inline transfer switch_to(fiber_info& self, context_handle to, fiber_info& to_info,
                          void* data) noexcept {
    before_switch(&self, to_info);
    const transfer t = fcontext::jump_fcontext(to, data);
    after_switch(&self);
    return t;
}

// Ends the calling context for good: resumes `to` (suspended in switch_to), running
// `on_arrival(transfer{<the ended context>, data})` on its stack first, whose result switch_to
// returns there. on_arrival is where the ended context's stack is released.
// Records no TSan frame (FJ_NO_TSAN_FRAME): it never returns.
[[noreturn]] FJ_NO_TSAN_FRAME inline void exit_to(context_handle to, fiber_info& to_info,
                                                  void* data,
                                                  transfer (*on_arrival)(transfer)) noexcept {
#if defined(FJ_ASAN)
    // Unpoisons this stack from here to its top: the frames that never return (the entry
    // function's) would otherwise leave their redzones poisoned in memory that the next fiber on
    // this stack, or the next mapping at this address, uses for other frames.
    __asan_handle_no_return();
#endif
    before_switch(nullptr, to_info);
    fcontext::ontop_fcontext(to, data, on_arrival);
    __builtin_unreachable();
}

} // namespace fj::detail
