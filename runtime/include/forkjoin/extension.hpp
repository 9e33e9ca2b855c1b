// The runtime's extension interface: what code built on fj::scheduler (the loop algorithms in
// algorithms/, or a user's own) may ask of the runtime beyond its public API, and nothing else.
// algorithms/ includes no other runtime header from detail/; the build checks it
// (algorithms/CMakeLists.txt). Documented in docs/api.md#extension-interface.
#pragma once

#include "detail/atomics.hpp"
#include "detail/callable_check.hpp"
#include "detail/current.hpp"
#include "detail/invoke.hpp"
#include "detail/worker.hpp"

namespace fj::ext {

// The atomics seam (detail/atomics.hpp): a lock-free protocol takes its atomics as a template
// parameter defaulting to this, so the model tests can run the same code under a model checker.
using std_atomics = detail::std_atomics;

// True when the calling thread is a worker whose own deque holds nothing, or is no worker at all.
// A hint, read without synchronisation: a thief may be taking the last task as it returns. What
// lazy binary splitting asks between chunks: empty means whatever this worker exposed has been
// stolen (or nothing was exposed yet), so splitting off work now feeds an idle worker; not empty
// means the pool is busy and the piece may go on serially.
inline bool own_queue_empty() noexcept {
    const detail::worker* w = detail::current_worker();
    return w == nullptr || w->m_deque.empty_hint();
}

// Rejects an empty callable (a null function pointer, an empty std::function) where work is
// created, with std::invalid_argument and a clear message, instead of failing later on a worker.
template <class F>
void check_callable(const F& fn) {
    detail::check_callable(fn);
}

// std::invoke(f, args...) for callables and pointers to members (not through a
// std::reference_wrapper), with the same result, value category and noexcept, without including
// <functional>: so that the algorithms do not add it to every user's translation unit. Call it
// qualified (ext::invoke), or argument-dependent lookup may also find std::invoke.
using detail::invoke;

} // namespace fj::ext
