// The state a fork()ed or submit()ted task shares with its fj::future: the completion word, the
// result, and how to free the block. Task and state live in one pooled block (fork_task), freed by
// whichever of the two sides finishes second (see completion.hpp).
#pragma once

#include "../errors.hpp"
#include "completion.hpp"
#include "result_slot.hpp"
#include "task.hpp"
#include "worker.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace fj::detail {

template <class T>
struct future_state {
    using destroy_fn = void (*)(future_state*) noexcept;

    completion m_completion;
    // no_unique_address: m_start may sit in the slot's tail padding (after its one-byte tag), so
    // the state stays 40 bytes and a task with a callable of up to 8 bytes fits 64.
    [[no_unique_address]] result_slot<T> m_result;
    start_flag m_start;
    destroy_fn m_destroy = nullptr;
    // The id of the scheduler that runs (ran) the task, 0 if none is known. Written before the
    // task is queued (or, for when_all / when_any, before finish()), read by then() only once the
    // completion word says done, so finish()'s release publishes it. then() on a ready future
    // queues the continuation there: see start_continuation().
    std::uint64_t m_home = 0;

    void destroy() noexcept { m_destroy(this); }
};
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
// The id of the scheduler whose task the calling thread runs, 0 off every pool.
std::uint64_t current_scheduler_id() noexcept;

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
        this->m_destroy = &destroy_impl;
        if constexpr (std::is_base_of_v<waiter, Hook>)
            this->m_wake = &wake_impl;
    }
    ~fork_task() {} // m_fn is destroyed by run_impl() or discard(), never here

    static void run_impl(task* t) noexcept {
        auto* self = static_cast<fork_task*>(t);
        // The claim decides the race with future::cancel(): exactly one of them wins.
        if (self->m_completion.try_start(self->m_start)) [[likely]]
            self->m_result.run(self->m_fn);
        else
            self->m_result.set_error(task_cancelled_error());
        self->m_fn.~F(); // captures go away before the future becomes ready
        if (self->m_completion.finish())
            destroy_impl(self); // the future was dropped unread
    }

    static void destroy_impl(future_state<T>* s) noexcept {
        auto* self = static_cast<fork_task*>(s);
        self->~fork_task();
        free_task_memory<fork_task>(self);
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
