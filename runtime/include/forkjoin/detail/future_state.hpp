// The state a fork()ed or submit()ted task shares with its fj::future: the completion word, the
// result, and how to free the block. Task and state live in one pooled block (fork_task), freed by
// whichever of the two sides finishes second (see completion.hpp).
#pragma once

#include "../errors.hpp"
#include "completion.hpp"
#include "function_ref.hpp"
#include "result_slot.hpp"
#include "task.hpp"
#include "worker.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace fj::detail {

// What future_state's one type-erased function is asked to do.
enum class state_action : unsigned char {
    destroy,      // free the state (the second of the task and its future to be done with it)
    may_run_here, // true for a task its consumer may run in place: a fork_task that is not a
                  // continuation (one waits for its antecedent); false for the others (a
                  // promise's, a when_all's, a when_any's)
    run_here,     // a task taken over by its consumer (completion::try_take()): run the
                  // callable, store its result and end the callable
};

template <class T>
struct future_state {
    // One function pointer for both actions keeps the state at 40 bytes.
    using manage_fn = bool (*)(future_state*, state_action) noexcept;

    completion m_completion;
    // no_unique_address: m_start may sit in the slot's tail padding (after its one-byte tag), so
    // the state stays 40 bytes and a task with a callable of up to 8 bytes fits 64.
    [[no_unique_address]] result_slot<T> m_result;
    start_flag m_start;
    manage_fn m_manage = nullptr;
    // The id of the scheduler that runs (ran) the task, 0 if none is known. Written before the
    // task is queued (or, for when_all / when_any, before finish()), read by then() only once the
    // completion word says done, so finish()'s release publishes it. then() on a ready future
    // queues the continuation there: see start_continuation().
    std::uint64_t m_home = 0;

    void destroy() noexcept { (void)m_manage(this, state_action::destroy); }
    bool may_run_here() noexcept { return m_manage(this, state_action::may_run_here); }
    // Precondition: may_run_here(), and m_completion.try_take() returned true.
    void run_here() noexcept { (void)m_manage(this, state_action::run_here); }
};
// The function of a state that is never run in place (a promise's, a when_all's, a when_any's):
// it only frees.
template <class T, void (*Destroy)(future_state<T>*) noexcept>
bool destroy_only(future_state<T>* s, state_action action) noexcept {
    if (action == state_action::destroy)
        Destroy(s);
    return false;
}

static_assert(sizeof(future_state<long>) == 40 && sizeof(future_state<void>) <= 40,
              "the start flag no longer fits the result slot's padding: small tasks grow a class");

// The callable's result type when called once as an lvalue (how the task calls it).
template <class F>
using task_result_t = std::invoke_result_t<std::decay_t<F>&>;

// Queues a continuation whose antecedent has just completed (called from the antecedent's
// finish(), on the thread that ran it): onto that thread's deque if it is a worker of the running
// scheduler, else into the running scheduler's injection queue. Sets `home` (the continuation's
// m_home) before queuing it. Never throws, never drops.
void schedule_continuation(task* t, std::uint64_t& home) noexcept;
// Starts a continuation whose antecedent was already complete when then() was called: on the
// antecedent's scheduler (`antecedent_home`) while that one is alive and open, so the same
// program puts the continuation on the same pool however the race with the antecedent went (and
// that pool's shutdown() waits for it); else on the current scheduler, like fj::async. Sets
// `home` before queuing. Throws (fj::scheduler_closed) without queuing it.
void start_continuation(task* t, std::uint64_t antecedent_home, std::uint64_t& home);

// A continuation whose antecedent is already ready starts at once; if that throws, it was never
// queued, so it is discarded before the exception goes on (then() on future and shared_future).
template <class Continuation>
void start_continuation_now(Continuation* c, std::uint64_t antecedent_home) {
    try {
        start_continuation(c, antecedent_home, c->m_home);
    } catch (...) {
        c->discard();
        throw;
    }
}
// A wait made outside every pool on a task that is still queued runs the task itself
// (docs/design/callers.md#take-over): enters the pool `home` as a caller, takes the task over
// (completion::try_take()) and calls run(), which runs it into its result. True if it ran; false
// if not (the thread is a worker, the task has started or been claimed, or the pool has no
// caller's slot free, is closing or is gone): then wait as usual.
bool run_queued_here(std::uint64_t home, completion& c, start_flag& start,
                     function_ref<void()> run) noexcept;

// The id of the scheduler whose task the calling thread runs, 0 off every pool.
std::uint64_t current_scheduler_id() noexcept;

// Whether a callable must run on a worker, never on a thread that get()s its future
// (std::launch::async without the deferred bit: async.hpp).
template <class F>
concept runs_on_a_worker = F::k_runs_on_a_worker;

// fork_task's optional extra base: nothing, or a waiter record (a continuation waits on its
// antecedent's completion, and the wake-up queues the continuation itself).
struct no_hook {};
struct continuation_hook : waiter {};

template <class F, class T, class Hook = no_hook>
class fork_task final : public task, public future_state<T>, public Hook {
public:
    // The callable is built from args inside the block, after the allocation succeeded: a failed
    // allocation leaves the arguments untouched (then() relies on it to keep its future).
    template <class... Args>
    static fork_task* make(Args&&... args) {
        void* memory = allocate_task_memory<fork_task>();
        try {
            return ::new (memory) fork_task(std::forward<Args>(args)...);
        } catch (...) {
            free_task_memory<fork_task>(memory);
            throw;
        }
    }

    // For a task that was created but never queued (its submission failed).
    void discard() noexcept {
        m_fn.~F();
        destroy_impl(this);
    }

private:
    template <class... Args>
    explicit fork_task(Args&&... args) : m_fn(std::forward<Args>(args)...) {
        this->m_run = &run_impl;
        this->m_manage = &manage;
        if constexpr (std::is_base_of_v<waiter, Hook>)
            this->m_wake = &wake_impl;
    }
    ~fork_task() {} // m_fn is destroyed by run_impl() or discard(), never here

    static void run_impl(task* t) noexcept {
        auto* self = static_cast<fork_task*>(t);
        // The claim decides the race with future::cancel() and with a consumer that takes the
        // task over (try_take()): exactly one of them wins.
        if (self->m_completion.try_start(self->m_start)) [[likely]] {
            self->m_result.run(self->m_fn);
            self->m_fn.~F(); // captures go away before the future becomes ready
        } else if (!self->m_completion.is_taken()) {
            self->m_result.set_error(task_cancelled_error());
            self->m_fn.~F();
        } // else the consumer runs the callable and ends it; the state is only finished here
        if (self->m_completion.finish())
            destroy_impl(self); // the future was dropped unread (or read after a take-over)
    }

    static void destroy_impl(future_state<T>* s) noexcept {
        auto* self = static_cast<fork_task*>(s);
        self->~fork_task();
        free_task_memory<fork_task>(self);
    }

    // The destroy case first, and alone: it runs for every task, and the run_here case (the
    // callable inlined) in the same function would give it a heavier prologue.
    static bool manage(future_state<T>* s, state_action action) noexcept {
        if (action == state_action::destroy) [[likely]] {
            destroy_impl(s);
            return true;
        }
        return manage_rarely(s, action);
    }

    [[gnu::noinline]] static bool manage_rarely(future_state<T>* s, state_action action) noexcept {
        if (action == state_action::may_run_here)
            return !std::is_base_of_v<waiter, Hook> && !runs_on_a_worker<F>;
        auto* self = static_cast<fork_task*>(s); // state_action::run_here
        self->m_result.run(self->m_fn);
        self->m_fn.~F(); // as run_impl() does: captures go before the result is read
        return true;
    }

    static void wake_impl(waiter* w) noexcept {
        auto* self = static_cast<fork_task*>(w);
        schedule_continuation(static_cast<task*>(self), self->m_home);
    }

    union { // a union so run_impl() can end the callable's life early; no optional flag needed
        F m_fn;
    };
};

} // namespace fj::detail
