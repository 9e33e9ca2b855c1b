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

struct thread_context {
    worker* w = nullptr;        // the worker this thread runs, or null off the pool
    fj::scheduler* s = nullptr; // the scheduler whose task this thread is running, or null
};

// constinit: no dynamic initialisation, so access needs no TLS wrapper call.
extern thread_local constinit thread_context tl_context;

inline worker* current_worker() noexcept {
    return tl_context.w;
}
inline fj::scheduler* current_scheduler_or_null() noexcept {
    return tl_context.s;
}

} // namespace fj::detail
