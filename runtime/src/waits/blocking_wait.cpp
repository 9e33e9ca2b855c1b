// Waiting for a completion (futures and stolen join branches).
//
// On a worker: park the waiting task on a fiber and let the worker go on (parking.cpp); where
// that is not allowed, run that worker's other tasks until the completion is done (help while
// waiting). Either way the OS thread never sleeps while runnable work exists. Timed waits help.
// Off the pool: register a waiter record on this thread's stack and block on it. The producer's
// finish() wakes it; the record stays alive until that wake-up has signalled it, because the wake
// is the producer's last touch (docs/design/completion.md).
#include "loop/helping.hpp"
#include "parking/parking.hpp"
#include "waits/blocking_waiter.hpp"

#include <chrono>
#include <mutex>

#include <forkjoin/detail/wait.hpp>

namespace fj::detail {

void wait_plain(completion& c) {
    if (worker* w = current_worker()) {
        // The awaited task is usually the one this frame forked last, still at the front of our
        // own deque: run our own tasks first, inline, as without fibers (wait inlining). Only
        // in our own pool's context: a foreign task's frame must not pop our deque's tasks.
        auto ready = [&] { return c.is_ready(); };
        if (w->m_pool == current_pool() && run_own_until(ready))
            return;
        if (try_park(c)) // stolen and still running: park; the worker goes on
            return;
        w = current_worker(); // re-read: run_own_until may have moved us
        if (w->m_role != slot_role::caller) {
            help_on_worker(pool_of(*w->m_pool), ready);
            return;
        }
        // A caller (docs/design/callers.md) runs on its own thread's stack, so nothing it runs
        // parks: it helps while there is work to take, then blocks as a thread outside the pool
        // does, instead of spinning beside the workers for the rest of the wait.
        if (help_while_work(pool_of(*w->m_pool), ready))
            return;
    }
    blocking_waiter record;
    if (!c.try_register(&record))
        return; // already done
    record.wait_woken();
}

bool wait_until_slow(completion& c, std::chrono::steady_clock::time_point deadline) {
    const wait_observation observed; // docs/tracing.md#observers
    if (current_worker() != nullptr) {
        // Yield-park until ready or past the deadline (a parked wait cannot time out by itself).
        for (;;) {
            if (c.is_ready())
                return true;
            if (std::chrono::steady_clock::now() >= deadline)
                return false;
            if (!try_yield())
                break; // not allowed here: help while waiting
        }
        worker* w = current_worker(); // re-read: we may have migrated
        unsigned polls = 0;
        // A task run while helping may overrun the deadline: help-while-waiting cannot preempt.
        help_on_worker(pool_of(*w->m_pool), [&] {
            return c.is_ready() ||
                   (++polls % 32 == 0 && std::chrono::steady_clock::now() >= deadline);
        });
        return c.is_ready();
    }
    blocking_waiter record;
    if (!c.try_register(&record))
        return true;
    {
        std::unique_lock lock(record.mutex);
        if (record.woken_cv.wait_until(lock, deadline, [&] { return record.woken; }))
            return true;
    }
    if (c.try_deregister(&record))
        return false;    // timed out; finish() will never see the record
    record.wait_woken(); // finish() raced the timeout and is waking us: wait for its last touch
    return true;
}

// Reached from wait() only while observers exist (docs/tracing.md#observers).
void wait_observed(completion& c) {
    const wait_observation observed;
    wait_plain(c);
}

} // namespace fj::detail
