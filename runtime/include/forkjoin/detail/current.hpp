// The one place that knows which worker (and which pool) the calling thread belongs to.
//
// Migration safety (for joins that park on fibers and resume on another thread): never keep the
// result of current_worker() across a call that may switch stacks; call it again afterwards.
#pragma once

namespace fj::detail {

struct worker;
struct pool_core;

struct fiber_info;
struct profile_frame;
struct thread_context;
// For other targets: a call the compiler cannot see through (worker_loop.cpp).
thread_context& context_out_of_line() noexcept;

struct thread_context {
    worker* w = nullptr;         // the worker this thread runs, or null off the pool
    pool_core* pool = nullptr;   // the pool whose task this thread is running, or null
    fiber_info* fiber = nullptr; // the fiber this thread runs on, null on its native stack
    // The innermost task frame being measured by fj::profile, null outside profiled regions
    // (docs/tracing.md#profiler). Per fiber like the rest: saved and restored around a park.
    profile_frame* profile = nullptr;
};

// constinit: no dynamic initialisation, so access needs no TLS wrapper call.
// initial-exec: the address is the thread pointer plus a link-time offset (no __tls_get_addr).
// The asm label gives the variable the symbol name that context()'s asm refers to, here and
// nowhere else (the definition, in worker_loop.cpp, inherits it from this declaration).
#define FJ_DETAIL_TL_CONTEXT_SYMBOL "fj_detail_tl_context"
extern thread_local constinit thread_context tl_context asm(FJ_DETAIL_TL_CONTEXT_SYMBOL)
    __attribute__((tls_model("initial-exec")));

// Never written: an input of the asm in context(), so that the compiler cannot move that asm
// above a call (any call might write a global), i.e. above a possible fiber switch.
extern int tls_anchor;

// The calling thread's context, its address recomputed at every call. A task that waited on a
// fiber may resume on another thread, and compilers keep a TLS address once computed for the
// rest of the function (GCC does with the default model in -fPIC code, and with any model under
// ThreadSanitizer, which instruments the address): after the switch it would name the old
// thread's context (docs/design/current-worker.md#migration-and-thread-locals). So the thread
// pointer is re-read in an asm volatile (never merged, never hoisted above a call). Never keep
// the reference across a call that may run other tasks; call context() again.
inline thread_context& context() noexcept {
#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
    char* p;
    asm volatile("movq %%fs:0, %0\n\t"
                 "addq " FJ_DETAIL_TL_CONTEXT_SYMBOL "@gottpoff(%%rip), %0"
                 : "=r"(p)
                 : "m"(tls_anchor));
    return *reinterpret_cast<thread_context*>(p);
#else
    return context_out_of_line();
#endif
}

#undef FJ_DETAIL_TL_CONTEXT_SYMBOL

inline worker* current_worker() noexcept {
    return context().w;
}

} // namespace fj::detail
