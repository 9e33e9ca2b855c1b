// Parking waiting tasks on fibers (docs/design/parking.md): what the rest of src/ calls. Parking
// knows nothing of how a worker finds work: the worker loop (loop/) hands it the loop body that
// each loop fiber runs, and asks it the questions below between tasks.
#pragma once

#include "parking/parking_lot.hpp"
#include "state/pool.hpp"

#include <cstdint>
#include <memory>

#include <forkjoin/detail/completion.hpp>
#include <forkjoin/detail/park_reason.hpp>
#include <forkjoin/options.hpp>
#include <forkjoin/stats.hpp>

namespace fj::detail {

// The worker loop's body: runs tasks until the pool stops, or until end_loop_task() says that
// the loop fiber it runs on must end (to resume a parked task).
using loop_body = void (*)(pool& p) noexcept;

// Creates the pool's parking state (parking_lot: stacks, per-worker switch state), whose loop
// fibers run `body`, or returns null when parking is off (options, or FJ_PARKING=0).
std::unique_ptr<parking_lot, parking_lot_deleter>
make_parking_lot(const scheduler_options& options, std::size_t workers, loop_body body);

// On one of a pool's workers, in its own context: parks the calling task until `c` is
// ready and returns true once it has been resumed (maybe on another worker of the same pool).
// Returns false, having done nothing, where parking is not allowed (off, a foreign context, an
// exception in flight, the cap on parked tasks reached, no memory for a stack): the caller then
// helps while waiting.
// `why`: what it waits for, counted and traced (park_reason.hpp).
bool try_park(completion& c, park_reason why = park_reason::result);

// The same conditions; parks the calling task and keeps it on this worker, which resumes it once
// it has run `patience` other tasks (at once if it finds none), so the caller re-checks whatever
// it waits for (reschedule_until with an arbitrary predicate, timed waits) without anything
// running on top of its frame. Returns false, having done nothing, where parking is not allowed.
bool try_yield(std::uint32_t patience = 1);

// Runs w's loop on fibers until the pool stops: every loop fiber runs the loop body, then ends
// into the parked task parking chose, or into the thread's own stack once the pool has stopped.
// False, running nothing, if no loop fiber could be made (no memory): the caller then runs the
// loop body on the thread's own stack, and its tasks never park.
bool run_worker_on_fibers(pool& p, worker& w);

// Before the thread of slot `index` (a worker or a spare) starts: the size of stack to start it
// with. Where p parks, first takes the stack of the slot's first loop fiber, so that
// run_worker_on_fibers() cannot fail for want of one and the thread's own stack runs only its
// start and end: then a small one (a 64 MiB thread stack is never kept by glibc's cache of thread
// stacks, so each start would map and unmap one). Otherwise (parking off, no stack to be had)
// worker_stack_size, where its tasks run. give_back_first_loop_stack() undoes it for a thread
// that did not start (nothing where nothing was taken).
std::size_t prepare_thread_stack(pool& p, std::size_t index) noexcept;
void give_back_first_loop_stack(pool& p, std::size_t index) noexcept;

// --- The worker loop's questions, between the tasks it runs at top level ------------------------
// With parking off (p.m_parking null) each is one test of a pointer.

// Whether tasks yield-parked on w wait for a re-check: the loop must then not sleep (nobody wakes
// a yielded task; its predicate is arbitrary).
inline bool has_yielded(pool& p, const worker& w) noexcept {
    return p.m_parking != nullptr && fiber_state_of(p, w).yielded_first != nullptr;
}
// Whether the oldest yielded task's patience has run out: the loop re-checks it now.
inline bool yielded_due(pool& p, const worker& w) noexcept {
    const fiber_worker& fw = fiber_state_of(p, w);
    return fw.tasks_since_recheck >= fw.yielded_first->patience;
}
// Appends a yield-parked task's record to w's list (fiber_runtime::yield, on w's fresh loop
// fiber). The list is w's own, touched by no other thread: relaxed, the record's link included.
inline void add_yielded(pool& p, const worker& w, park_record& rec) noexcept {
    fiber_worker& fw = fiber_state_of(p, w);
    rec.m_next.store(nullptr, std::memory_order_relaxed);
    if (fw.yielded_last != nullptr) {
        fw.yielded_last->m_next.store(&rec, std::memory_order_relaxed);
    } else {
        fw.yielded_first = &rec;
        fw.tasks_since_recheck = 0; // its patience counts from now, not from the task that yielded
    }
    fw.yielded_last = &rec;
}
// Takes the oldest yielded task's record, to run (a re-check). Precondition: has_yielded().
inline task* take_yielded(pool& p, const worker& w) noexcept {
    fiber_worker& fw = fiber_state_of(p, w);
    park_record* r = fw.yielded_first;
    fw.yielded_first = static_cast<park_record*>(r->m_next.load(std::memory_order_relaxed));
    if (fw.yielded_first == nullptr)
        fw.yielded_last = nullptr;
    return r;
}
// The loop is about to run t at top level (`is_recheck`: a yielded task's record).
inline void begin_loop_task(pool& p, const worker& w, task* t, bool is_recheck) noexcept {
    if (p.m_parking == nullptr)
        return;
    fiber_worker& fw = fiber_state_of(p, w);
    fw.tasks_since_recheck = is_recheck ? 0 : fw.tasks_since_recheck + 1;
    fw.loop_task = t;
}
// The loop's task has returned (on whichever worker the loop fiber now runs): true when the loop
// must end, so that its fiber ends into the parked task that task took (a resumption).
inline bool end_loop_task(pool& p) noexcept {
    if (p.m_parking == nullptr)
        return false;
    fiber_worker& now = fiber_state_of(p, *current_worker());
    now.loop_task = nullptr;
    return now.resume_next != nullptr;
}

// The fiber counters of a scheduler_stats snapshot.
void add_fiber_stats(const parking_lot& lot, scheduler_stats& stats) noexcept;

} // namespace fj::detail
