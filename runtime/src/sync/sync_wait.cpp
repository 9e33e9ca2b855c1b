// The wait of the task-parking primitives (forkjoin/detail/sync_waiter.hpp; docs/design/sync.md).
//
// A task on a worker parks on its waiter's completion (parking.hpp): no inline run of its own
// forks first and no helping, because a task that waits for a lock must not run other work on
// top of its frame (that work could need a lock the frame holds). Where parking is refused, the
// thread blocks, as it would on the std type, and the rescue of blocked pools sees a blocked
// worker as it sees any other.
#include "parking/parking.hpp"
#include "timers/timers.hpp"
#include "waits/blocking_waiter.hpp"

#include <system_error>
#include <thread>

#include <forkjoin/detail/current.hpp>
#include <forkjoin/detail/future_state.hpp>
#include <forkjoin/detail/pool_core.hpp>
#include <forkjoin/detail/sync_waiter.hpp>
#include <forkjoin/sync_await.hpp>
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

// A coroutine's sleep: the timer's entry, on the heap (the timers' map allocates its node
// anyway). It frees itself when it fires, before releasing the record: the release may resume
// the coroutine, which frees the awaiter.
struct sleep_entry : timers::entry {
    sync_waiter* waiter = nullptr;
};

} // namespace

coroutine_waiter::coroutine_waiter() noexcept {
    m_run = &run;
    m_wake = &wake;
}

void coroutine_waiter::prepare(std::coroutine_handle<> h) noexcept {
    m_handle = h;
    const pool_core* p = current_pool();
    m_origin = p != nullptr ? p->m_id : 0;
}

void coroutine_waiter::wake(waiter* w) noexcept {
    auto* self = static_cast<coroutine_waiter*>(w);
    if (current_pool() == nullptr && self->m_origin != 0) {
        // Released outside every pool (a plain thread, the timer thread): back to the pool the
        // coroutine waited on, if it still exists and takes work.
        try {
            start_continuation(self, self->m_origin, self->m_home);
            return;
        } catch (...) { // closed: as a future's co_await (the default scheduler, or here)
        }
    }
    schedule_continuation(self, self->m_home);
}

void coroutine_waiter::run(task* t) noexcept {
    auto* self = static_cast<coroutine_waiter*>(t);
    if (self->m_retry != nullptr && !self->m_retry(*self))
        return;              // waits again: registered anew, maybe resumed elsewhere already
    self->m_handle.resume(); // last touch: the coroutine may free the awaiter
}

// A coroutine's sleep (queue_awaiter): true if the deadline has passed; else arms a timer whose
// firing releases `w`, before or after the coroutine registers on it (before: it goes on).
bool arm_sleep(void*, std::uint64_t deadline_ticks, sync_waiter& w) {
    const std::chrono::steady_clock::time_point deadline{
        std::chrono::steady_clock::duration(static_cast<std::int64_t>(deadline_ticks))};
    if (std::chrono::steady_clock::now() >= deadline)
        return true;
    auto* e = new sleep_entry;
    e->deadline = deadline;
    e->waiter = &w;
    e->fire = [](timers::entry& base) noexcept {
        auto* entry = static_cast<sleep_entry*>(&base);
        sync_waiter& waiter = *entry->waiter;
        delete entry; // the timer thread touches the entry no more once fire() runs
        waiter.outcome = wait_outcome::timed_out;
        release(waiter);
    };
    try {
        timers::instance().arm(*e); // may fire at once: w is not touched after this
    } catch (...) {
        // No thread for the timers (or no memory for its map): this thread sleeps, as
        // sleep_until does where a task cannot park, and the coroutine goes on.
        delete e;
        std::this_thread::sleep_until(deadline);
        return true;
    }
    return false;
}

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
