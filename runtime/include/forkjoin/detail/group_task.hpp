// The state of an fj::task_group and the task its run() creates (docs/design.md#task-group).
//
// m_word = (tasks run and not finished) << 1 | k_waiting. A task's end is a CAS that takes one
// off the count and, when that leaves none with a waiter registered, also clears k_waiting: that
// task alone then wakes the waiter (finish_one). The waiter stays in wait() until it is woken, so
// the group outlives the wake; a task that finds no waiter touches the group no more after its
// CAS, so the group may be destroyed as soon as the count reads zero.
#pragma once

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

struct group_state {
    static constexpr std::uint64_t k_waiting = 1;
    static constexpr std::uint64_t k_one = 2; // one task in the count

    explicit group_state(pool_core* p) noexcept : m_pool(p) {}

    pool_core* const m_pool; // where run() queues; null: the current pool where run() is called
    std::atomic<std::uint64_t> m_word{0};
    completion* m_waiter = nullptr;    // the waiter's record; published by its k_waiting RMW
    std::atomic<bool> m_cancel{false}; // cancel() or a task's exception: skip unstarted tasks
    std::atomic<bool> m_failed{false}; // a task threw; the first one's exception is m_error
    std::exception_ptr m_error;        // written once, by the task that set m_failed
    // run() since the last wait(): set by run() on any thread, read and cleared by wait() and the
    // destructor (relaxed: the calls that set it are ordered before those by the caller's own
    // synchronisation, as every use of a group after its runs must be).
    std::atomic<bool> m_unwaited{false};
};

// A task ended, thrown (out of line: task_group.cpp).
void record_group_error(group_state& g) noexcept;
// The ending task found it was the last with a waiter registered: wake it (task_group.cpp).
void wake_group_waiter(group_state& g) noexcept;

// Takes one task off the count; the last one with a waiter wakes it. The last access to g unless
// it wakes the waiter. acq_rel: release publishes the task's effects (and m_error) to the waiter's
// acquire of the count; acquire pairs with the waiter's release RMW that set k_waiting after
// writing m_waiter.
inline void finish_one(group_state& g) noexcept {
    std::uint64_t old = g.m_word.load(std::memory_order_relaxed);
    std::uint64_t next;
    do {
        next = old - group_state::k_one;
        if (next == group_state::k_waiting)
            next = 0; // the last task takes the waiter's flag: only it wakes the waiter
    } while (!g.m_word.compare_exchange_weak(old, next, std::memory_order_acq_rel,
                                             std::memory_order_relaxed));
    if (old == (group_state::k_one | group_state::k_waiting)) [[unlikely]]
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
