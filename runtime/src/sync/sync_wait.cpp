// The wait of the task-parking primitives (forkjoin/detail/sync_waiter.hpp; docs/design/sync.md).
//
// A task on a worker parks on its waiter's completion (parking.hpp): no inline run of its own
// forks first and no helping, because a task that waits for a lock must not run other work on
// top of its frame (that work could need a lock the frame holds). Where parking is refused, the
// thread blocks, as it would on the std type, and the rescue of blocked pools sees a blocked
// worker as it sees any other.
#include "parking/parking.hpp"
#include "sync/timers.hpp"
#include "waits/blocking_waiter.hpp"

#include <system_error>
#include <thread>

#include <forkjoin/detail/current.hpp>
#include <forkjoin/detail/sync_waiter.hpp>
#include <forkjoin/this_task.hpp>

namespace fj::detail {
namespace {

using clock = std::chrono::steady_clock;

// The deadline's half of the race with a release: whoever takes the waiter out of its queue
// (under the primitive's lock) is the one who ends its wait.
void time_out(sync_waiter& w, sync_withdraw& withdraw) noexcept {
    if (withdraw.withdraw(w))
        release(w);
}

struct deadline_entry : timers::entry {
    sync_waiter* waiter = nullptr;
    sync_withdraw* withdraw = nullptr;
};

// Parks the calling task until `w` is released or withdrawn at the deadline. False, having done
// nothing, where the task may not park (or no timer thread can be started): the caller blocks.
bool park_until(sync_waiter& w, clock::time_point deadline, sync_withdraw& withdraw,
                park_reason why) {
    if (current_worker() == nullptr)
        return false;
    deadline_entry e;
    e.deadline = deadline;
    e.waiter = &w;
    e.withdraw = &withdraw;
    e.fire = [](timers::entry& base) noexcept {
        auto& d = static_cast<deadline_entry&>(base);
        time_out(*d.waiter, *d.withdraw);
    };
    timers& t = timers::instance();
    try {
        t.arm(e);
    } catch (const std::system_error&) {
        return false; // no thread for the timers: block this one instead
    }
    const bool parked = try_park(w.released, why);
    // Resumed (maybe on another thread), or refused: either way the entry leaves the timers
    // before it leaves the stack. A timer that fired meanwhile has finished firing.
    t.disarm(e);
    return parked;
}

// The thread's own wait, off the pool or where parking is refused.
void block_until(sync_waiter& w, clock::time_point deadline, sync_withdraw& withdraw) {
    blocking_waiter record;
    if (!w.released.try_register(&record))
        return; // released meanwhile
    {
        std::unique_lock lock(record.mutex);
        if (record.woken_cv.wait_until(lock, deadline, [&] { return record.woken; }))
            return;
    }
    time_out(w, withdraw);
    record.wait_woken(); // by our own release, or by the primitive's that won the race
}

} // namespace

void wait_released(sync_waiter& w, park_reason why) {
    if (w.released.is_ready())
        return;
    if (current_worker() != nullptr && try_park(w.released, why))
        return;
    blocking_waiter record;
    if (w.released.try_register(&record))
        record.wait_woken();
}

void wait_released_until(sync_waiter& w, clock::time_point deadline, sync_withdraw& withdraw,
                         park_reason why) {
    if (w.released.is_ready())
        return;
    if (clock::now() >= deadline) {
        time_out(w, withdraw);
        wait_released(w, why); // released by the primitive, which won the race, or by us
        return;
    }
    if (park_until(w, deadline, withdraw, why))
        return;
    block_until(w, deadline, withdraw);
}

} // namespace fj::detail

namespace fj::this_task {

void sleep_until(std::chrono::steady_clock::time_point deadline) {
    if (std::chrono::steady_clock::now() >= deadline)
        return;
    // Nothing queues the waiter: only its deadline releases it.
    struct deadline_only final : detail::sync_withdraw {
        bool withdraw(detail::sync_waiter& w) noexcept override {
            w.outcome = detail::wait_outcome::timed_out;
            return true;
        }
    } only_the_deadline;
    detail::sync_waiter w;
    if (!detail::park_until(w, deadline, only_the_deadline, detail::park_reason::sleep))
        std::this_thread::sleep_until(deadline);
}

} // namespace fj::this_task
