// The pool's count of active threads against its closed flag: the termination invariant's
// counting steps (state/pool.hpp; docs/design/shutdown.md and docs/design/callers.md), as
// functions over the count and the injection queue so that test/model runs the same code under
// Relacy.
//
// Every step is seq_cst: the invariant needs one order of the counting threads' increments, the
// close, and the last thread's decrement and re-checks. Pairs: enter_counted's increment and
// closed load against the close and leave_after_recheck's closed load and decrement (whichever
// comes first in that order, the other side sees it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace fj::detail {

// A thread that is not one of the pool's counted workers (a caller, an outside helper) counts
// itself before it takes or adds work. True if the pool has not closed: it may go on, and the
// pool cannot stop before it leaves. False: the pool has closed; the caller must leave_counted()
// at once.
template <class Count, class Queue>
bool enter_counted(Count& active, const Queue& queue) noexcept {
    active.fetch_add(1, std::memory_order_seq_cst);
    return !queue.is_closed();
}

// Takes back enter_counted's count; the thread's own queues are empty by now. True if it was the
// last one counted in a closed pool: it must wake every sleeper, so that the last of them to go
// idle again finds the pool drained and stops it.
template <class Count, class Queue>
bool leave_counted(Count& active, const Queue& queue) noexcept {
    return active.fetch_sub(1, std::memory_order_seq_cst) == 1 && queue.is_closed();
}

enum class last_out {
    not_last,     // others are counted, or the pool is open, or a task is parked
    stops,        // the last one out of a closed, drained pool: no task can appear any more
    work_appeared // the last one out, but work is in sight: counted again, it goes to take it
};

// A worker leaves the count after its re-check found every queue empty; `closed` was read before
// that re-check. The last one out of a closed pool with nothing parked looks again
// (work_visible()) before it stops the pool: a counted thread may have published work after our
// re-check and left the count before us (a caller handing over what its call did not join, an
// outside helper's task that submitted). Its publication comes before its decrement, which comes
// before ours, which comes before the second look, all in the one seq_cst order: the look sees
// it. Nobody can publish after our decrement (nobody is counted), so a second look that finds
// nothing is final.
template <class Count, class Parked, class WorkVisible>
last_out leave_after_recheck(Count& active, bool closed, const Parked& parked,
                             WorkVisible&& work_visible) {
    if (active.fetch_sub(1, std::memory_order_seq_cst) != 1 || !closed ||
        parked.load(std::memory_order_seq_cst) != 0)
        return last_out::not_last;
    if (!work_visible())
        return last_out::stops;
    active.fetch_add(1, std::memory_order_seq_cst);
    return last_out::work_appeared;
}

} // namespace fj::detail
