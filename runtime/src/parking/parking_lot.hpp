// The state of parking (docs/design/parking.md): a parked task's record, each worker's fiber
// state, and the pool's stacks. Only parking/ and the worker loop's inline questions below touch
// it; everything that switches contexts is in parking.cpp.
#pragma once

#include "fibers/fiber_switch.hpp"
#include "fibers/stack_pool.hpp"
#include "state/pool.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

#include <forkjoin/detail/completion.hpp>
#include <forkjoin/detail/task.hpp>

namespace fj::detail {

// A parked task: a task (queued to resume it) and a waiter (registered on the completion).
struct park_record final : task, waiter {
    pool* owner = nullptr;
    context_handle parked = nullptr; // the parked context, set on the far side of the switch
    fiber_info* info = nullptr;      // its sanitizer context
    std::size_t parked_on = 0;       // worker index, to count migrations
    bool via_injection = false;      // queued in the injection queue (for the statistics)
    std::uint32_t patience = 1;      // yield-parked: tasks the worker runs before re-checking it
};

// Fiber state of one worker, touched only by the thread that runs that worker.
struct alignas(128) fiber_worker {
    context_handle native = nullptr;    // the worker thread's own stack: where the last loop ends
    fiber_info native_info;             // its sanitizer context
    park_record* resume_next = nullptr; // taken by the loop at top level: end into it
    task* loop_task = nullptr;          // the task the loop is running at top level
    // Tasks that yield-parked on this worker (reschedule_until, timed waits), oldest first,
    // linked through task::m_next. Their predicates are arbitrary, so nobody wakes them: the loop
    // re-checks the oldest once it has run that record's `patience` tasks since the last
    // re-check, and instead of sleeping.
    park_record* yielded_first = nullptr;
    park_record* yielded_last = nullptr;
    std::uint32_t tasks_since_recheck = 0;
    stack_cache stacks; // a few stacks at hand: most parks take no lock
    // The stack of the worker's first loop fiber, taken before its thread starts
    // (prepare_thread_stack), so that the thread itself needs only a small stack; null once
    // taken by the thread, or if none could be had.
    fiber_info* first_loop_stack = nullptr;
};

struct parking_lot {
    parking_lot(std::size_t stack_size, std::size_t cap, std::size_t workers,
                void (*body)(pool&) noexcept)
        : stacks(stack_size, k_keep_resident), max_parked(cap), per_worker(workers),
          loop_body(body) {}

    // Stacks returned to the pool keep at most this much of their top resident; the rest is
    // given back to the kernel, so a deep burst does not pin memory.
    static constexpr std::size_t k_keep_resident = std::size_t{256} << 10;

    stack_pool stacks; // declared first: destroyed last, after the caches have flushed into it
    std::size_t max_parked;
    std::vector<fiber_worker> per_worker;
    void (*const loop_body)(pool&) noexcept; // what every loop fiber runs (the worker loop's)
};

// The fiber state of worker w of pool p, which parks (p.m_parking is not null).
inline fiber_worker& fiber_state_of(pool& p, const worker& w) noexcept {
    return p.m_parking->per_worker[w.m_index];
}

// A stack for a fresh fiber, from the calling worker's cache, with its sanitizer record at the
// top; and back into the cache of the worker it ends on. take_stack throws std::bad_alloc.
fiber_info* take_stack(parking_lot& lot);
void release_stack(parking_lot& lot, fiber_info* info) noexcept;

// The cap on parked tasks when the options leave it to the default: three quarters of what the
// process's map count allows for guarded stacks.
std::size_t default_parking_cap();

} // namespace fj::detail
