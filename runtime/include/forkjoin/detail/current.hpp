// The one place that knows which worker (and which scheduler) the calling thread belongs to.
//
// Migration safety (for joins that park on fibers and resume on another thread): never keep the
// result of current_worker() across a call that may switch stacks; call it again afterwards.
#pragma once

namespace fj {
class scheduler;
} // namespace fj

namespace fj::detail {

struct worker;

struct fiber_info;

struct thread_context {
    worker* w = nullptr;         // the worker this thread runs, or null off the pool
    fj::scheduler* s = nullptr;  // the scheduler whose task this thread is running, or null
    fiber_info* fiber = nullptr; // the fiber this thread runs on, null on its native stack
};

// constinit: no dynamic initialisation, so access needs no TLS wrapper call.
// initial-exec: the address is computed from the thread pointer at every access. With the
// default model in -fPIC code GCC computes it once per function (one __tls_get_addr call) and
// keeps it across calls, so after a join that parked and resumed on another thread it would read
// the old thread's context (measured in the fibers study, section 3.5).
extern thread_local constinit thread_context tl_context __attribute__((tls_model("initial-exec")));

inline worker* current_worker() noexcept {
    return tl_context.w;
}
inline fj::scheduler* current_scheduler_or_null() noexcept {
    return tl_context.s;
}

} // namespace fj::detail
