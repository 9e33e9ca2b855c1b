// The block that all copies of one fj::shared_future hold (docs/design/shared-future.md).
//
// A future's completion word takes one waiter. The core is that one waiter: when the task
// finishes, the completion wakes the core, and the core wakes every listener on its list (the
// broadcast). A listener is a thread or task inside a wait, which listens through a completion
// of its own and waits on that exactly as fj::future waits on a task's (parks or helps on a
// worker, blocks elsewhere), or a continuation of shared_future::then(). The core counts its
// references: one per shared_future copy, plus one for its registration on the completion,
// dropped by the broadcast; the last reference frees the future's state and the core.
//
// Only what the inline code needs is here; the core itself (a mutex, the list) lives in
// runtime/src/waits/shared_core.cpp.
#pragma once

#include "completion.hpp"

#include <chrono>

namespace fj::detail {

class shared_core;

// A record on a core's list: woken once by the broadcast, which reads m_next before it calls
// wake() (the wake is its last touch of the record). The links are the core's, under its mutex.
struct shared_listener : waiter {
    shared_listener* m_next = nullptr;
    shared_listener* m_prev = nullptr;
};

using shared_state_destroy_fn = void (*)(void* state) noexcept;

// The core of a future's state that is being shared, with one reference (the caller's). It
// registers as the completion's waiter; if the task is already done, the core is ready at once.
// The caller has checked that the future was not cancelled. Frees the state with
// destroy_state(state) once the last reference is gone. Throws std::bad_alloc, having done
// nothing.
shared_core* make_shared_core(completion& source, void* state,
                              shared_state_destroy_fn destroy_state);

// The core of a future that cancel() stopped before it was shared: ready, with no state (the
// caller detaches from it), and get() rethrows one fj::task_cancelled. Throws std::bad_alloc.
shared_core* make_cancelled_shared_core();

// A new reference for a copy; the caller holds one already.
void add_reference(shared_core& core) noexcept;
// Gives up one reference; the last frees the state and the core. Never blocks.
void drop_reference(shared_core& core) noexcept;

// Returns once the core has been woken (its task is done). Waits as fj::future::wait() does.
void wait_shared(shared_core& core);
// The same with a deadline; true if woken before it.
bool wait_shared_until(shared_core& core, std::chrono::steady_clock::time_point deadline);

// Puts `listener` on the core's list, to be woken by the broadcast. False if the broadcast has
// happened (or will never be needed): then the task is done and nothing will wake `listener`.
bool try_listen(shared_core& core, shared_listener& listener);

// Rethrows the fj::task_cancelled of a core made by make_cancelled_shared_core().
[[noreturn]] void rethrow_cancelled(const shared_core& core);

} // namespace fj::detail
