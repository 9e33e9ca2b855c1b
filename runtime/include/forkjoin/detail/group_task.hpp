// The state of an fj::task_group and the task its run() creates (docs/design/task-group.md).
//
// m_word = (tasks run and not finished) << 1 | k_waiting. A task's end takes one off the count
// and, when that leaves none with a waiter registered, clears k_waiting with a CAS: the task whose
// CAS does so alone wakes the waiter (finish_one). The waiter stays in wait() until it is woken,
// so the group outlives the wake; a task that finds no waiter touches the group no more after its
// decrement, so the group may be destroyed as soon as the count reads zero.
//
// Atomics: std_atomics in the runtime (group_state is basic_group_state<>); the model test passes
// Relacy's (atomics.hpp). The waiter's side is waits/group_wait.hpp in the runtime's sources.
#pragma once

#include "atomics.hpp"
#include "completion.hpp"
#include "invoke.hpp"
#include "pool_core.hpp"
#include "task.hpp"
#include "worker.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>

namespace fj::detail {

template <class Atomics = std_atomics>
struct basic_group_state {
    template <class T>
    using atomic = typename Atomics::template atomic<T>;

    static constexpr std::uint64_t k_waiting = 1;
    static constexpr std::uint64_t k_one = 2; // one task in the count

    explicit basic_group_state(pool_core* p) noexcept : m_pool(p) {}

    // Every run() and every task's end writes m_word, from any worker: it has a cache line of its
    // own, so that the fields every task only reads (m_pool, m_cancel) stay shared-clean in each
    // worker's cache instead of moving with it.
    alignas(64) atomic<std::uint64_t> m_word{0};
    alignas(64) pool_core* const m_pool; // where run() queues; null: the current pool there
    // The waiter's record; published by its k_waiting RMW.
    basic_completion<Atomics>* m_waiter = nullptr;
    atomic<bool> m_cancel{false}; // cancel() or a task's exception: skip unstarted tasks
    atomic<bool> m_failed{false}; // a task threw; the first one's exception is m_error
    std::exception_ptr m_error;   // written once, by the task that set m_failed
    // run() since the last wait(): set by run() on any thread, read and cleared by wait() and the
    // destructor (relaxed: the calls that set it are ordered before those by the caller's own
    // synchronisation, as every use of a group after its runs must be).
    atomic<bool> m_unwaited{false};
};
using group_state = basic_group_state<>;

// A task ended, thrown (out of line: task_group.cpp).
void record_group_error(group_state& g) noexcept;
// The ending task found it was the last with a waiter registered: wake it. The waiter wrote
// m_waiter before its release RMW that set k_waiting, which our acq_rel CAS read (through the
// count's chain of RMWs). finish() is the last touch: the waiter may return and destroy the group
// as soon as it sees it. Out of line in the runtime (task_group.cpp instantiates it).
template <class Atomics>
void wake_group_waiter(basic_group_state<Atomics>& g) noexcept {
    (void)g.m_waiter->finish();
}
extern template void wake_group_waiter<std_atomics>(group_state& g) noexcept;

// Takes one task off the count; the last one with a waiter wakes it. The last access to g unless
// it wakes the waiter (docs/design/task-group.md#steps, step 2):
//   a. fetch_sub one task. Unless that left exactly k_waiting (no task, a waiter registered),
//      done: one RMW that cannot fail, however many workers end tasks of the group at once.
//   b. Else take the flag back with a CAS from k_waiting to 0. Success: this task alone wakes the
//      waiter. Failure: a run() has added a task since (the word is k_one | k_waiting or more);
//      that task's own end repeats step a, so this one is done.
// acq_rel, both: release publishes the task's effects (and m_error) to the waiter's acquire of the
// count; acquire pairs with the waiter's release RMW that set k_waiting after writing m_waiter.
template <class Atomics>
inline void finish_one(basic_group_state<Atomics>& g) noexcept {
    using state = basic_group_state<Atomics>;
    const std::uint64_t old = g.m_word.fetch_sub(state::k_one, std::memory_order_acq_rel);
    if (old != (state::k_one | state::k_waiting)) [[likely]]
        return;
    std::uint64_t expected = state::k_waiting;
    if (g.m_word.compare_exchange_strong(expected, 0, std::memory_order_acq_rel,
                                         std::memory_order_relaxed))
        wake_group_waiter(g);
}

// Runs fn as one of g's tasks: skipped once the group is cancelled; an exception is recorded.
template <class F>
inline void run_in_group(group_state& g, F& fn) noexcept {
    // relaxed: a hint; a task that misses a concurrent cancel() simply runs.
    if (g.m_cancel.load(std::memory_order_relaxed))
        return;
    try {
        detail::invoke(fn);
    } catch (...) {
        record_group_error(g);
    }
}

// The task run() queues: the callable and the group, in a pooled block freed before the count
// drops (so the group's end never waits on it).
template <class F>
class group_task final : public task {
public:
    template <class G>
    static group_task* make(group_state& g, G&& fn) {
        void* memory = allocate_task_memory<group_task>();
        try {
            return ::new (memory) group_task(g, std::forward<G>(fn));
        } catch (...) {
            free_task_memory<group_task>(memory);
            throw;
        }
    }

    // Never queued (the submission failed).
    void discard() noexcept {
        this->~group_task();
        free_task_memory<group_task>(this);
    }

private:
    template <class G>
    group_task(group_state& g, G&& fn) : m_group(g), m_fn(std::forward<G>(fn)) {
        m_run = &run_impl;
    }

    static void run_impl(task* t) noexcept {
        auto* self = static_cast<group_task*>(t);
        group_state& g = self->m_group;
        run_in_group(g, self->m_fn);
        self->discard(); // captures die before the count says the task is done
        finish_one(g);
    }

    group_state& m_group;
    F m_fn;
};

} // namespace fj::detail
