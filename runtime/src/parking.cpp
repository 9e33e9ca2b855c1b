// Joins that never trap a worker: a task that must wait on a worker parks on a fiber
// (docs/design.md#parking).
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
#include "parking.hpp"

#include "fiber_switch.hpp"
#include "observe.hpp"
#include "stack_pool.hpp"
#include "worker_loop.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fj::detail {

using stack_context = boost::context::stack_context;

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
};

struct parking_lot {
    parking_lot(std::size_t stack_size, std::size_t cap, std::size_t workers)
        : stacks(stack_size, k_keep_resident), max_parked(cap), per_worker(workers) {}

    // Stacks returned to the pool keep at most this much of their top resident; the rest is
    // given back to the kernel, so a deep burst does not pin memory.
    static constexpr std::size_t k_keep_resident = std::size_t{256} << 10;

    stack_pool stacks; // declared first: destroyed last, after the caches have flushed into it
    std::size_t max_parked;
    std::vector<fiber_worker> per_worker;
};

namespace {

// The sanitizer record of a fiber sits at the top of its stack, above the context that
// make_context() places there.
constexpr std::size_t k_info_space = (sizeof(fiber_info) + 63) & ~std::size_t{63};

// A fresh loop fiber's stack comes from the calling worker's cache over the pool's stack pool,
// and goes back into the cache of whichever worker of the pool it ends on (fibers are created and
// end only on the pool's workers).
stack_cache& cache_of(parking_lot& lot) noexcept {
    return lot.per_worker[current_worker()->m_index].stacks;
}

// Takes a stack and puts its sanitizer record at its top. Throws std::bad_alloc.
fiber_info* take_stack(parking_lot& lot) {
    stack_context sc = cache_of(lot).allocate(lot.stacks);
    auto* info = ::new (static_cast<char*>(sc.sp) - k_info_space) fiber_info{};
    init_sanitizer_context(*info, static_cast<char*>(sc.sp) - sc.size, sc.size - k_info_space);
    return info;
}

// The stack whose record is `info` goes back to the cache; its fiber has ended.
void release_stack(parking_lot& lot, fiber_info* info) noexcept {
    destroy_sanitizer_context(*info);
    info->~fiber_info();
    stack_context sc;
    sc.sp = reinterpret_cast<char*>(info) + k_info_space;
    sc.size = lot.stacks.stack_size();
    cache_of(lot).deallocate(lot.stacks, sc);
}

std::size_t default_parking_cap() {
    // Each parked task holds a guarded stack: two memory maps. Use at most three quarters of the
    // process's map count for them, the rest is for everything else (the heap, libraries). If
    // several schedulers together run out, a failed mmap makes a wait help instead.
    std::size_t max_map_count = 65530;
    std::ifstream in("/proc/sys/vm/max_map_count");
    if (in)
        in >> max_map_count;
    const std::size_t cap = max_map_count / 2 * 3 / 4;
    return cap < 64 ? 64 : cap;
}

bool parking_enabled_by_environment(bool configured) {
    const char* env = std::getenv("FJ_PARKING");
    if (env == nullptr || *env == '\0')
        return configured;
    const std::string value = env;
    if (value == "0")
        return false;
    if (value == "1")
        return true;
    throw std::invalid_argument("FJ_PARKING='" + value +
                                "' is not valid: use 1 to park waiting tasks on fibers, 0 to "
                                "help while waiting, or unset it for the scheduler's option");
}

} // namespace

void parking_lot_deleter::operator()(parking_lot* lot) const noexcept {
    delete lot;
}

std::unique_ptr<parking_lot, parking_lot_deleter> make_parking_lot(const scheduler_options& options,
                                                                   std::size_t workers) {
    if (!parking_enabled_by_environment(options.park_waiting_tasks))
        return nullptr;
    const std::size_t cap =
        options.max_parked_tasks != 0 ? options.max_parked_tasks : default_parking_cap();
    return std::unique_ptr<parking_lot, parking_lot_deleter>(
        new parking_lot(options.fiber_stack_size, cap, workers));
}

// The pool's side: the loop fibers, park and resume.
struct fiber_runtime {
    static fiber_worker& state_of(pool& s, const worker& w) noexcept {
        return s.m_parking->per_worker[w.m_index];
    }

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

    // The body of every loop fiber; never returns. Runs the loop, then ends into the context the
    // loop chose (a parked task to resume, or the thread's own stack when the pool stops).
    static void fiber_main(transfer t) noexcept {
        const auto& m = *static_cast<const start_message*>(t.data);
        pool& s = *m.s;
        fiber_info& self = *m.self;
        {
            fiber_worker& fw = state_of(s, *current_worker());
            after_switch(nullptr, m.record == nullptr ? &fw.native_info : nullptr);
            if (m.record == nullptr) {
                fw.native = t.fctx;
            } else {
                m.record->parked = t.fctx;       // saved: from here on it may be resumed
                m.enqueue(m.closure, *m.record); // last touch of the parked stack
            }
        }
        const next_context next = loop(s);
        exit_message bye{s.m_parking.get(), &self};
        context().fiber = next.info;
        exit_to(next.context, *next.info, &bye, &on_arrival_after_exit);
    }

    // Runs on the stack that a loop fiber ended into, before that context goes on: the ended
    // fiber's stack goes back to the pool (its sanitizer contexts are no longer current).
    static transfer on_arrival_after_exit(transfer t) noexcept {
        const auto& bye = *static_cast<const exit_message*>(t.data);
        release_stack(*bye.lot, bye.ended);
        return {nullptr, nullptr};
    }

    struct next_context {
        context_handle context;
        fiber_info* info;
    };

    // The loop of every loop fiber. Returns the context to end into: a parked task taken at top
    // level, or the worker thread's own stack when the pool stops.
    static next_context loop(pool& s) noexcept {
        for (;;) {
            worker& w = *current_worker(); // re-read every round: this fiber may have migrated
            fiber_worker& fw = state_of(s, w);
            task* t = nullptr;
            bool is_recheck = false;
            if (fw.yielded_first == nullptr) {
                t = find_work_or_sleep(s, w);
                if (t == nullptr) // stopped: end on the thread's own stack
                    return {fw.native, &fw.native_info};
            } else {
                // A yielded task waits here: never sleep (its predicate cannot wake us), and
                // re-check it once its patience has run out. find_work(), not
                // find_work_or_sleep(): the pool cannot stop meanwhile (m_parked counts it).
                if (fw.tasks_since_recheck < fw.yielded_first->patience)
                    t = find_work(s, w, true);
                if (t == nullptr) {
                    t = take_yielded(fw);
                    is_recheck = true;
                }
            }
            fw.tasks_since_recheck = is_recheck ? 0 : fw.tasks_since_recheck + 1;
            fw.loop_task = t;
            run_task(w, t);
            fiber_worker& now = state_of(s, *current_worker());
            now.loop_task = nullptr;
            if (park_record* r = std::exchange(now.resume_next, nullptr))
                return {r->parked, r->info}; // r lives on the stack we end into
        }
    }

    // worker_main() on fibers. False if the first loop fiber could not be created (no memory):
    // the worker then runs its loop on its own stack, and its tasks never park.
    static bool run_worker(pool& s, worker& w) {
        fiber_worker& fw = state_of(s, w);
        capture_native_context(fw.native_info);
        fiber_info* info = nullptr;
        const context_handle first = try_make_loop_fiber(s, info);
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
        s.m_sleep.notify_one(); // after the seq_cst push that published r: docs/design.md#sleep
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
            fiber_worker& fw = state_of(s, *w);
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
        // handled is per thread (fibers study §4.2).
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
    static bool park_with(pool& s, Enqueue&& enqueue) {
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
        // After the checks that can refuse the park: the observers set aside what they follow
        // of this task (trace slices, profiler frames) until it resumes.
        parked_observation observation;
        if (observed()) [[unlikely]]
            observation = on_park(*w);
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

    static bool park(completion& c) {
        pool* s = may_park();
        return s != nullptr && park_with(*s, [&c](park_record& rec) {
                   if (!c.try_register(&rec))
                       wake(&rec); // ready meanwhile: queue it now
               });
    }

    // Yield-parking: park and keep the record on this worker, whose loop resumes it after the
    // next task it runs (or at once if there is none), so nothing runs on top of the waiting
    // frame and the re-check waits for at most one task. False if not allowed.
    // Measured against the first version, which queued the record at the back of the injection
    // queue (docs/performance.md#reschedule-until): that re-checked only after everything queued
    // there, 3.9 ms behind a predicate that was true after 0.1 ms.
    static bool yield(std::uint32_t patience) {
        pool* s = may_park();
        // Runs on the fresh loop fiber of the same worker, before its loop starts: the list is
        // this worker's own (touched by no other thread), so no atomics beyond the record's link.
        return s != nullptr && park_with(*s, [s, patience](park_record& rec) {
                   rec.patience = patience;
                   fiber_worker& fw = state_of(*s, *current_worker());
                   rec.m_next.store(nullptr, std::memory_order_relaxed);
                   if (fw.yielded_last != nullptr) {
                       fw.yielded_last->m_next.store(&rec, std::memory_order_relaxed);
                   } else {
                       fw.yielded_first = &rec;
                       fw.tasks_since_recheck = 0; // its patience counts from now, not from the
                                                   // task that has just yielded
                   }
                   fw.yielded_last = &rec;
               });
    }

    static park_record* take_yielded(fiber_worker& fw) noexcept {
        park_record* r = fw.yielded_first;
        fw.yielded_first = static_cast<park_record*>(r->m_next.load(std::memory_order_relaxed));
        if (fw.yielded_first == nullptr)
            fw.yielded_last = nullptr;
        return r;
    }
};

bool is_park_record(const task* t) noexcept {
    return t->m_run == &fiber_runtime::resume;
}

bool try_park(completion& c) {
    return fiber_runtime::park(c);
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
