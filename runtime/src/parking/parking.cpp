// Joins that never trap a worker: a task that must wait on a worker parks on a fiber
// (docs/design/parking.md).
//
// Every worker runs its loop on a fiber (a "loop fiber", on a pooled stack). A join whose child
// was not stolen pops and runs it inline, exactly as without fibers. Only a wait that would block
// (future::get()/wait(), or fj::join whose second branch was stolen and is still running) parks:
//   1. take a fresh loop fiber;
//   2. switch to it; the fresh fiber, first thing on the far side of the switch, once our context
//      is saved, stores our handle in a park_record on our stack and registers that record as the
//      completion's waiter (if the completion is already ready, it queues the record at once).
//      Registering only after the save is what makes a lost or early wake-up impossible: nobody
//      can resume a context that has not been saved;
//   3. the worker goes on with other work on the fresh fiber;
//   4. the completion's finish() calls the record's wake(), which queues the record as a task:
//      in the completing worker's resumable slot if it is one of this pool's (its loop takes it
//      before anything else: the last to finish the join continues; a thief's loop may take it
//      while that worker is busy), else in the injection queue;
//   5. a loop that takes the record at its top level resumes the parked fiber by ending: it
//      switches to the parked context for good, and its stack goes back to the pool (released
//      on the parked fiber's stack, right after the switch). Anyone else
//      who takes it (a wait that could not park and helps, an outside helper) queues it again:
//      a parked task never continues on top of another task's frame, which could be the very
//      thing it waits for.
// reschedule_until() and timed waits yield-park: park, and keep the record on this worker, whose
// loop resumes it to re-check after the next task it runs (or at once when it finds nothing to
// do). Suspended fibers are never destroyed: every fiber ends by returning the next one to run.
#include "parking/parking.hpp"

#include "observe/events.hpp"
#include "platform/environment.hpp"
#include "sleep/sleep.hpp"

#include <exception>
#include <new>
#include <type_traits>
#include <utility>

namespace fj::detail {

// The pool's side: the loop fibers, park and resume.
struct fiber_runtime {
    // What a fresh loop fiber does first, on the far side of the switch that starts it, with the
    // context that switched to it. Lives on that context's stack, which may be resumed elsewhere
    // as soon as the record is queued: read everything before that.
    struct start_message {
        pool* s;
        fiber_info* self; // the fresh fiber's own record
        // Null: the worker's first loop fiber (the context left is the thread's own stack);
        // else the context left parks: store it in `record`, then call enqueue(closure, record).
        park_record* record;
        void (*enqueue)(void* closure, park_record& record);
        void* closure;
    };

    // What the context that a loop fiber ends into receives: the ended fiber's stack to release.
    struct exit_message {
        parking_lot* lot;
        fiber_info* ended;
    };

    // The context a loop fiber ends into, and its record.
    struct next_context {
        context_handle context;
        fiber_info* info;
    };

    // A fresh loop fiber of s, not started; its record through `info`. Throws std::bad_alloc.
    static context_handle make_loop_fiber(pool& s, fiber_info*& info) {
        info = take_stack(*s.m_parking);
        return make_context(info, info->stack_size, &fiber_main);
    }

    // The same, or null when no stack can be had (the caller then does not park).
    static context_handle try_make_loop_fiber(pool& s, fiber_info*& info) noexcept {
        try {
            return make_loop_fiber(s, info);
        } catch (const std::bad_alloc&) {
            return nullptr;
        }
    }

    // The entry of every loop fiber; never returns. Runs the loop, then ends into the context
    // the loop chose (a parked task to resume, or the thread's own stack when the pool stops).
    // Records no TSan frame, as it is never left (fiber_switch.hpp); the work is in run_fiber.
    FJ_NO_TSAN_FRAME static void fiber_main(transfer t) noexcept {
        exit_message bye{};
        const next_context next = run_fiber(t, bye);
        exit_to(next.context, *next.info, &bye, &on_arrival_after_exit);
    }

    // What a loop fiber does between its start and its end; fills in `bye` and returns the
    // context to end into.
    static next_context run_fiber(transfer t, exit_message& bye) noexcept {
        const auto& m = *static_cast<const start_message*>(t.data);
        pool& s = *m.s;
        fiber_info& self = *m.self;
        {
            fiber_worker& fw = fiber_state_of(s, *current_worker());
            after_switch(nullptr, m.record == nullptr ? &fw.native_info : nullptr);
            if (m.record == nullptr) {
                fw.native = t.fctx;
            } else {
                m.record->parked = t.fctx;       // saved: from here on it may be resumed
                m.enqueue(m.closure, *m.record); // last touch of the parked stack
            }
        }
        s.m_parking->loop_body(s); // returns to end this fiber: see end_loop_task()
        const next_context next = next_after_loop(s);
        bye = exit_message{s.m_parking.get(), &self};
        context().fiber = next.info;
        return next;
    }

    // Runs on the stack that a loop fiber ended into, before that context goes on: the ended
    // fiber's stack goes back to the pool (its sanitizer contexts are no longer current).
    static transfer on_arrival_after_exit(transfer t) noexcept {
        const auto& bye = *static_cast<const exit_message*>(t.data);
        release_stack(*bye.lot, bye.ended);
        return {nullptr, nullptr};
    }

    // What a loop fiber ends into once its loop body has returned: the parked task that the
    // loop's last task took at top level (resume(), step 5), or the worker thread's own stack
    // when the pool has stopped.
    static next_context next_after_loop(pool& s) noexcept {
        fiber_worker& fw = fiber_state_of(s, *current_worker()); // this fiber may have migrated
        if (park_record* r = std::exchange(fw.resume_next, nullptr))
            return {r->parked, r->info}; // r lives on the stack we end into
        return {fw.native, &fw.native_info};
    }

    // worker_main() on fibers. False if the first loop fiber could not be created (no memory):
    // the worker then runs its loop on its own stack, and its tasks never park.
    static bool run_worker(pool& s, worker& w) {
        fiber_worker& fw = fiber_state_of(s, w);
        capture_native_context(fw.native_info);
        fiber_info* info = std::exchange(fw.first_loop_stack, nullptr);
        const context_handle first = info != nullptr
                                         ? make_context(info, info->stack_size, &fiber_main)
                                         : try_make_loop_fiber(s, info);
        if (first == nullptr)
            return false;
        start_message m{&s, info, nullptr, nullptr, nullptr};
        context().fiber = info;
        // Returns when a loop fiber of this thread ends into it (stop). Native stacks never
        // migrate: this is still worker w's thread.
        switch_to(fw.native_info, first, *info, &m);
        context().fiber = nullptr;
        return true;
    }

    // The record's wake(): the completion it waits on is ready. Last touch of the record by the
    // completing thread: once queued, it may be resumed and gone at once.
    static void wake(waiter* wt) noexcept {
        auto* r = static_cast<park_record*>(wt);
        make_resumable(*r->owner, r);
    }

    // Queues r in s's injection queue, for a loop at top level, and wakes a sleeper. Accepted
    // while s closes: a parked task is work being finished. The push is the last touch of r; `s`
    // must not live on r's stack (the caller passes the scheduler itself).
    static void queue_for_a_loop(pool& s, park_record* r) noexcept {
        r->via_injection = true;
        s.m_injected.push(r, true);
        wake_for_work(s, pusher::other); // after the seq_cst push that published r
    }

    static void make_resumable(pool& s, park_record* r) noexcept {
        worker* w = current_worker();
        if (w != nullptr && w->m_pool == &s && context().pool == &s) {
            // Into this worker's resumable slot: its loop takes it before anything else (the
            // last to finish continues), a thief's loop if this worker is busy; helping frames
            // leave it alone. Only this thread stores into the slot, so an empty slot stays
            // empty until our store. Taken already by a loop, the record may be resumed and gone.
            if (w->m_resumable.load(std::memory_order_relaxed) == nullptr) {
                // release (at least): the record before whoever takes it (acquire exchange).
                publish_work(s, [&](bool seq_cst) {
                    w->m_resumable.store(r, seq_cst ? std::memory_order_seq_cst
                                                    : std::memory_order_release);
                });
                return;
            }
            // Two waiters woken before this worker's loop came back (a completion nested in a
            // task): the second goes on the deque, where any loop may take it too.
            try {
                push_local(s, *w, r); // popped next by this worker: the last to finish continues
                return;
            } catch (...) { // the deque could not grow: the injection queue needs no memory
            }
            queue_for_a_loop(s, r);
            return;
        }
        // Another thread (outside the pool, or another pool's worker): the pool may finish and
        // be destroyed as soon as the record is queued, so the destructor waits for m_wakers.
        // relaxed: the pool cannot stop before the record is queued (m_parked), and the queue's
        // seq_cst push orders this increment before anything that follows the pop.
        s.m_wakers.fetch_add(1, std::memory_order_relaxed);
        queue_for_a_loop(s, r);
        // release: pairs with the destructor's acquire load; our last touch of s.
        s.m_wakers.fetch_sub(1, std::memory_order_release);
    }

    // The record's run(): whoever took it from a queue resumes the parked task (step 5) if it
    // is a loop at top level; anyone else hands it back to the pool. A parked task never
    // continues on top of another task's frame: that frame could be what it waits for.
    static void resume(task* t) noexcept {
        auto* r = static_cast<park_record*>(t);
        pool& s = *r->owner;
        worker* w = current_worker();
        if (w != nullptr && w->m_pool == &s && context().pool == &s && context().fiber != nullptr) {
            fiber_worker& fw = fiber_state_of(s, *w);
            if (fw.loop_task == r) { // the loop ends into it once run() returns
                // seq_cst: the record leaves the count only now that an active worker holds it
                // (the termination invariant: parked, queued or held, never none of the three).
                s.m_parked.fetch_sub(1, std::memory_order_seq_cst);
                w->m_stats.tasks_run.unbump(); // a resumption, not a task: keep the counts exact
                if (r->via_injection)
                    w->m_stats.injected_taken.unbump();
                fw.resume_next = r;
                return;
            }
        }
        // A thread helping inside a wait (or outside the pool) took it: back to the injection
        // queue, for a loop at top level.
        if (w != nullptr) {
            w->m_stats.tasks_run.unbump();
            if (r->via_injection)
                w->m_stats.injected_taken.unbump();
        }
        queue_for_a_loop(s, r);
    }

    // Whether the calling task may park now (see try_park()).
    static pool* may_park() {
        worker* w = current_worker();
        if (w == nullptr || context().fiber == nullptr)
            return nullptr; // off the pool, or a worker running its loop on its own stack
        pool& s = pool_of(*w->m_pool);
        if (s.m_parking == nullptr || context().pool != &s)
            return nullptr; // parking off, or nested in a foreign scheduler's task
        // A wait inside a catch block or during unwinding must not migrate: the exception being
        // handled is per thread (std::current_exception() and the unwinder's state live in the
        // thread, not in the fiber).
        if (std::uncaught_exceptions() > 0 || std::current_exception() != nullptr)
            return nullptr;
        // relaxed: the cap is approximate by design (a few over it when workers race is fine).
        if (s.m_parked.load(std::memory_order_relaxed) >= s.m_parking->max_parked)
            return nullptr;
        return &s;
    }

    // Parks the calling task; `enqueue(record)` runs on the far side of the switch, once our
    // context is saved, and must arrange for the record to be queued (now or by a wake-up).
    // Queuing the record is enqueue's last touch of anything on the parked stack (the record,
    // the closures, their captures): from then on that stack may be resumed elsewhere.
    template <class Enqueue>
    static bool park_with(pool& s, park_reason why, Enqueue&& enqueue) {
        worker* w = current_worker();
        fiber_info* next_info = nullptr;
        const context_handle next = try_make_loop_fiber(s, next_info);
        if (next == nullptr)
            return false;
        park_record rec;
        rec.m_run = &resume;
        rec.m_wake = &wake;
        rec.owner = &s;
        rec.info = context().fiber;
        rec.parked_on = w->m_index;
        w->m_stats.parks.bump();
        if (why != park_reason::result)
            w->m_stats.sync_parks.bump();
        // After the checks that can refuse the park: the observers set aside what they follow
        // of this task (trace slices, profiler frames) until it resumes.
        parked_observation observation;
        if (observed()) [[unlikely]]
            observation = on_park(*w, why);
        // seq_cst: counted before this worker can go idle, in the order the last idle worker
        // reads it (termination invariant).
        s.m_parked.fetch_add(1, std::memory_order_seq_cst);
        fiber_info* const self = context().fiber;
        const auto call_enqueue = [](void* closure, park_record& r) {
            (*static_cast<std::remove_reference_t<Enqueue>*>(closure))(r);
        };
        start_message m{&s, next_info, &rec, call_enqueue, &enqueue};
        context().fiber = next_info;
        switch_to(*self, next, *next_info, &m);
        // Resumed, maybe on another worker of the pool.
        context().fiber = self;
        worker& now = *current_worker();
        now.m_stats.resumes.bump();
        if (now.m_index != rec.parked_on)
            now.m_stats.migrations.bump();
        if (observation.active) [[unlikely]]
            on_resume(now, observation, rec.parked_on);
        return true;
    }

    static bool park(completion& c, park_reason why) {
        pool* s = may_park();
        return s != nullptr && park_with(*s, why, [&c](park_record& rec) {
                   if (!c.try_register(&rec))
                       wake(&rec); // ready meanwhile: queue it now
               });
    }

    // Yield-parking: park and keep the record on this worker, whose loop resumes it after the
    // next task it runs (or at once if there is none), so nothing runs on top of the waiting
    // frame and the re-check waits for at most one task. False if not allowed. (A record queued
    // at the back of the injection queue would be re-checked only after everything queued there:
    // docs/performance.md#reschedule-until.)
    static bool yield(std::uint32_t patience) {
        pool* s = may_park();
        // Runs on the fresh loop fiber of the same worker, before its loop starts.
        return s != nullptr && park_with(*s, park_reason::result, [s, patience](park_record& rec) {
                   rec.patience = patience;
                   add_yielded(*s, *current_worker(), rec);
               });
    }
};

std::unique_ptr<parking_lot, parking_lot_deleter>
make_parking_lot(const scheduler_options& options, std::size_t workers, loop_body body) {
    if (!parking_enabled(options.park_waiting_tasks))
        return nullptr;
    set_resumption_run(&fiber_runtime::resume);
    const std::size_t cap =
        options.max_parked_tasks != 0 ? options.max_parked_tasks : default_parking_cap();
    return std::unique_ptr<parking_lot, parking_lot_deleter>(
        new parking_lot(options.fiber_stack_size, cap, workers, body));
}

bool try_park(completion& c, park_reason why) {
    return fiber_runtime::park(c, why);
}

bool try_yield(std::uint32_t patience) {
    return fiber_runtime::yield(patience);
}

void add_fiber_stats(const parking_lot& lot, scheduler_stats& stats) noexcept {
    stats.fiber_stacks = lot.stacks.mapped();
    stats.peak_fiber_stacks = lot.stacks.peak_live();
}

bool run_worker_on_fibers(pool& p, worker& w) {
    return fiber_runtime::run_worker(p, w);
}

} // namespace fj::detail
