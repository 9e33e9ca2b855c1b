// Where workers (and helping threads) find work, how they help while waiting, and how they sleep.
//
// Find-work order for a worker (docs/design.md#find-work):
//   0. at its loop's top level only: a parked task it has just made resumable (worker.hpp's
//      m_resumable; docs/design.md#parking);
//   1. every k_injection_period-th look: the injection queue first, so a worker with a long local
//      backlog still starts outside submissions (Go's scheduler does this every 61 ticks);
//   2. its own deque (newest first: the task it forked last, hot in cache);
//   3. steal from other workers, starting at a random victim (oldest first: the biggest pieces;
//      at top level, a victim's resumable parked task before its deque);
//   4. the injection queue.
// Idle workers spin for options().spin_before_sleep, then sleep on the event count
// (docs/design.md#sleep); in a pool with more workers than CPUs they spin only while the awake
// workers fit on the CPUs, and sleep with a timeout (docs/design.md#crowded).
// The shutdown sequence is in pool.cpp and docs/design.md#shutdown.
#include "worker_loop.hpp"

#include "cpu_budget.hpp"
#include "crowding.hpp"
#include "fiber_switch.hpp"
#include "guard_registry.hpp"
#include "observe.hpp"
#include "overflow_handler.hpp"
#include "parking.hpp"
#include "rescue.hpp"
#include "system.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include <forkjoin/detail/cpu_relax.hpp>
#include <forkjoin/detail/observe.hpp>

namespace fj::detail {
// Its symbol name comes from the declaration's asm label (current.hpp).
thread_local constinit thread_context tl_context __attribute__((tls_model("initial-exec"))){};
int tls_anchor = 0;

__attribute__((noinline)) thread_context& context_out_of_line() noexcept {
    thread_context* p = &tl_context;
    asm volatile("" : "+r"(p)::"memory"); // not const, not pure: re-evaluated at every call
    return *p;
}

namespace {

constexpr std::uint32_t k_injection_period = 61;
// How long worker 0 sleeps before it comes back to release a burst's unused task memory (the
// central pool's decay is 10 s, so memory goes back within 11 s of its last use; block_cache.hpp).
constexpr std::chrono::milliseconds k_idle_block_release_period{1000};

// Waiting with nothing to run: pause briefly, then give the CPU to other threads.
void back_off(unsigned idle_rounds) {
    if (idle_rounds < 64) {
        for (int i = 0; i < 16; ++i)
            cpu_relax();
    } else {
        std::this_thread::yield();
    }
}

} // namespace

void run_task(worker& w, task* t) noexcept {
    // A worker's own tasks run with its pool as the current one, also when the worker is nested
    // inside a foreign pool's task (which it ran through that pool's try_run_one() or
    // reschedule_until(), and which set tl_context.pool to its own pool).
    pool_core* const saved = context().pool;
    context().pool = w.m_pool;
    run_counted(w, t, [t]() noexcept { t->run(); });
    context().pool = saved; // context() again: the task may have moved us to another thread
}

namespace {

// A resumable parked task from w's slot (worker.hpp), or nullptr. The relaxed load keeps the
// common empty case to a read of a line that is rarely written; acquire on the exchange pairs
// with the release store that published the record (its fiber handle was written before).
task* take_resumable(worker& w) noexcept {
    if (w.m_resumable.load(std::memory_order_relaxed) == nullptr)
        return nullptr;
    return w.m_resumable.exchange(nullptr, std::memory_order_acquire);
}

} // namespace

namespace {

task* steal_from_others(pool& p, worker* self, std::uint64_t random, bool at_top_level) {
    const std::size_t n = p.m_workers.size();
    const std::size_t start = static_cast<std::size_t>(random % n);
    for (std::size_t i = 0; i < n; ++i) {
        worker& victim = p.m_workers[(start + i) % n];
        if (&victim == self)
            continue;
        // A waiter its worker made resumable while busy goes first: it is the oldest work there
        // (the continuation of a join), and someone is waiting on it.
        task* t = at_top_level ? take_resumable(victim) : nullptr;
        if (t != nullptr || victim.m_deque.steal(t) == steal_result::success) {
            if (self != nullptr) {
                self->m_stats.steals.bump();
                if (self->observed()) [[unlikely]]
                    on_steal(*self, victim);
            }
            return t;
        }
        if (self != nullptr)
            self->m_stats.failed_steals.bump();
    }
    return nullptr;
}

// A task taken from the injection queue. A parked task's record is not counted: its resumption
// takes the count back (fiber_runtime::resume), and the observers leave it out likewise.
task* taken_injected(worker& w, task* t) noexcept {
    w.m_stats.injected_taken.bump();
    if (w.observed()) [[unlikely]]
        on_take_injected(w, t);
    return t;
}

} // namespace

task* find_work(pool& p, worker& w, bool at_top_level) {
    // A waiter this worker has just made resumable first, before the periodic look at the
    // injection queue: the last to finish a join continues it (docs/design.md#parking). Left on
    // the deque, one completion in 61 ran a queued task before its waiter.
    if (at_top_level) {
        if (task* t = take_resumable(w))
            return t;
    }
    if (++w.m_tick % k_injection_period == 0) {
        if (task* t = p.m_injected.try_pop())
            return taken_injected(w, t);
    }
    if (!w.m_deque.owner_sees_empty()) {
        if (task* t = w.m_deque.pop())
            return t;
    }
    if (p.m_workers.size() > 1) {
        if (task* t = steal_from_others(p, &w, w.next_random(), at_top_level))
            return t;
    }
    if (task* t = p.m_injected.try_pop())
        return taken_injected(w, t);
    return nullptr;
}

bool work_visible(const pool& p) {
    if (!p.m_injected.empty())
        return true; // exact, under the consumer lock: see injection_queue.hpp
    // seq_cst loads, like the deques' (after the sleeper's barrier): see make_resumable().
    for (std::size_t i = 0, n = p.m_workers.size(); i < n; ++i) {
        const worker& w = p.m_workers[i];
        if (!w.m_deque.empty_hint() || w.m_resumable.load(std::memory_order_seq_cst) != nullptr)
            return true;
    }
    return false;
}

namespace {

// A thread leaves the active count (going to sleep, or leaving the pool). `closed` was read
// before the caller's last re-check of the queues found them empty. The last one out of a closed
// pool with nothing parked stops it (the termination invariant below). Returns true if it did.
bool leave_active_after_recheck(pool& p, bool closed) noexcept {
    // seq_cst: the termination invariant needs a single order of these decrements with the queue
    // re-checks and the helpers' increments.
    // A parked task is pending work too (docs/design.md#parking): it is counted in m_parked
    // until a worker takes its record from a queue.
    if (p.m_active.fetch_sub(1, std::memory_order_seq_cst) == 1 && closed &&
        p.m_parked.load(std::memory_order_seq_cst) == 0) {
        // Last one awake, nothing queued, nothing can come: stop everybody.
        p.m_stop.store(true, std::memory_order_release); // pairs with the acquire loads of m_stop
        p.m_sleep.notify_all();
        return true;
    }
    return false;
}

// A thread leaves the active count for good unless work is in sight: a sleeper's prewait,
// barrier and re-check (docs/design.md#sleep) without the sleep, so a wake-up aimed at it goes to
// a sleeper still waiting (the event count signals one that waits) and no visible work is left
// behind. Returns false, still counted, when it saw work (unless the pool has stopped).
bool leave_unless_work(pool& p) noexcept {
    (void)p.m_sleep.prepare_wait();
    if (p.m_asymmetric_barrier)
        heavy_barrier();
    const bool closed = p.m_injected.is_closed(); // before the re-check, as in a sleep
    if (!p.m_stop.load(std::memory_order_acquire) && work_visible(p)) {
        p.m_sleep.cancel_wait();
        return false;
    }
    leave_active_after_recheck(p, closed);
    p.m_sleep.cancel_wait();
    return true;
}

} // namespace

void leave_active(pool& p) noexcept {
    // With work in sight, somebody counted (or woken for it) takes it and later leaves through
    // the termination check; this count only goes.
    if (!leave_unless_work(p))
        p.m_active.fetch_sub(1, std::memory_order_seq_cst); // seq_cst: as every m_active update
}

namespace {

bool is_spare(const pool& p, const worker& w) noexcept {
    return w.m_index >= p.m_worker_count;
}

// Whether worker w takes a place in the process's budget of running workers (cpu_budget.hpp):
// every worker of a pool that shares it, but no spare (a spare stands in for a blocked worker).
bool takes_cpu_place(const pool& p, const worker& w) noexcept {
    return p.m_shares_cpu_budget && !is_spare(p, w);
}

// Waits for a place in the budget, if w takes one (docs/design.md#cpu-budget). A closing pool
// drains without one: its shutdown must not wait on other pools' work.
void take_cpu_place(pool& p, worker& w, bool counted_asleep) {
    if (!takes_cpu_place(p, w))
        return;
    cpu_budget::instance().acquire(
        w,
        [&p]() noexcept {
            return p.m_injected.is_closed() || p.m_stop.load(std::memory_order_acquire);
        },
        counted_asleep);
}

// A spare leaves the pool for good (docs/design.md#rescue, step 7) unless work is in sight. Only
// at its loop's top level with nothing of its own pending: an empty deque (its tasks' forks are
// run or stolen) and no resumable waiter in its slot.
bool try_retire(pool& p, worker& w) noexcept {
    if (!w.m_deque.owner_sees_empty() || w.m_resumable.load(std::memory_order_relaxed) != nullptr)
        return false;
    if (!leave_unless_work(p))
        return false;
    if (w.observed()) [[unlikely]]
        on_spare_retire(w); // its thread still owns the buffer until it ends
    return true;
}

// How long an idle spare sleeps before it retires.
constexpr std::chrono::milliseconds k_spare_idle{100};

// The CPUs p's workers may run on, re-read from the calling worker's affinity mask when the last
// read is k_cpus_recheck old (docs/design.md#crowded). Of the workers that find it old at once,
// the one whose compare-exchange moves the time stamp re-reads. relaxed throughout: a hint.
std::uint32_t current_cpus(pool& p, std::chrono::steady_clock::time_point now) noexcept {
    const std::int64_t ticks = now.time_since_epoch().count();
    std::int64_t last = p.m_cpus_read_at.load(std::memory_order_relaxed);
    if (ticks - last >= std::chrono::steady_clock::duration(k_cpus_recheck).count() &&
        p.m_cpus_read_at.compare_exchange_strong(last, ticks, std::memory_order_relaxed)) {
        const std::size_t cpus = usable_cpus(affinity_cpu_count(), p.m_cgroup_limit);
        p.m_cpus.store(static_cast<std::uint32_t>(cpus), std::memory_order_relaxed);
        return static_cast<std::uint32_t>(cpus);
    }
    return p.m_cpus.load(std::memory_order_relaxed);
}

} // namespace

// Returns the next task for worker w, sleeping while there is none; nullptr once the scheduler
// has stopped (closed, and every task finished).
//
// Invariant (termination): m_active counts workers that are not asleep plus helping threads
// inside run_one_outside(). A thread only takes a task while counted, and after the close only
// counted threads add work (an outside submit is ordered before the close, and then its item is in
// the injection queue, or after it, and then it is refused). So when the last counted worker
// finds the queue closed and every queue empty, no task can ever appear again.
task* find_work_or_sleep(pool& p, worker& w) {
    const bool spare = is_spare(p, w);
    bool idle_too_long = false;       // a spare slept k_spare_idle without finding work
    auto backstop = k_backstop_first; // a crowded pool's sleep timeout (crowding.hpp)
    for (;;) {
        if (spare) [[unlikely]] {
            if ((idle_too_long || p.m_rescue->retire_requested(w.m_index)) && try_retire(p, w))
                return nullptr;
        }
        if (task* t = find_work(p, w, true))
            return t;

        // 1. Spin: work often appears within microseconds (a sibling's next fork), and a sleep plus
        //    a wake-up costs tens of microseconds. Not while more workers are awake than there
        //    are CPUs (docs/design.md#crowded): a spinner then runs in place of a worker with
        //    work, so give that one the CPU instead (yield), look once more and sleep.
        const auto idle_since = std::chrono::steady_clock::now();
        const std::uint32_t cpus = current_cpus(p, idle_since);
        const bool crowded = p.m_worker_count > cpus;
        task* found = nullptr;
        if (crowded && awake_workers(p.m_worker_count, p.m_sleepers.waiters()) > cpus) {
            std::this_thread::yield();
            found = find_work(p, w, true);
        } else {
            const auto spin_until = idle_since + p.m_options.spin_before_sleep;
            for (unsigned round = 0; found == nullptr; ++round) {
                for (int i = 0; i < 32; ++i)
                    cpu_relax();
                found = find_work(p, w, true);
                if ((round & 15) == 15 && std::chrono::steady_clock::now() >= spin_until)
                    break;
            }
        }
        if (found != nullptr)
            return found;

        // Going idle: a good moment to give back task memory a burst left unused for a while
        // (block_cache.hpp). Worker 0 sleeps with a timeout, so an idle program still returns a
        // burst's memory that appears, or decays, while every worker sleeps (freed futures on
        // an outside thread): one wake-up a second per pool, whatever its size. A spare sleeps
        // with a timeout too: its end (docs/design.md#rescue).
        if (idle_blocks_pending())
            release_idle_blocks(false);
        const bool timed_sleep = w.m_index == 0;

        // 2. Sleep, with the event count's prewait / re-check / commit (docs/design.md#sleep).
        const auto key = p.m_sleep.prepare_wait();
        // The sleeper's half of the asymmetric StoreLoad barrier: after it, any push whose
        // sleeper check missed our prewait is visible to the re-check below.
        if (p.m_asymmetric_barrier)
            heavy_barrier();
        if (p.m_stop.load(std::memory_order_acquire)) {
            p.m_sleep.cancel_wait();
            return nullptr;
        }
        // Read the closed flag before re-checking the queues: once it is set, every accepted
        // submission has swung the injection queue's tail, so the re-check sees it (a producer
        // still linking its node counts as present). seq_cst load of the tail word.
        const bool closed = p.m_injected.is_closed();
        if (work_visible(p)) {
            p.m_sleep.cancel_wait();
            continue;
        }
        if (leave_active_after_recheck(p, closed)) {
            p.m_sleep.cancel_wait();
            return nullptr;
        }
        w.m_stats.sleeps.bump();
        if (w.observed()) [[unlikely]]
            on_sleep_begin(w);
        // Asleep, a worker holds no place in the budget of running workers; it takes one back
        // below, before it counts itself awake.
        cpu_budget::release_if_held(w);
        const auto now = std::chrono::steady_clock::now();
        bool timed_out = false;
        if (spare)
            (void)p.m_sleep.commit_wait_until(key, now + k_spare_idle);
        else if (crowded) // the backstop: a pusher that skipped waking us may block before it
                          // takes its work (docs/design.md#crowded)
            timed_out = !p.m_sleep.commit_wait_until(key, now + backstop);
        else if (timed_sleep)
            (void)p.m_sleep.commit_wait_until(key, now + k_idle_block_release_period);
        else
            p.m_sleep.commit_wait(key);
        take_cpu_place(p, w, true); // still counted asleep (the rescue sees it idle) meanwhile
        w.m_stats.wakeups.bump();
        if (w.observed()) [[unlikely]]
            on_sleep_end(w);
        // seq_cst: the termination invariant's single order; and the Dekker pair with the rescue
        // monitor's disarm (rescuer::on_all_awake()).
        const std::uint32_t active = p.m_active.fetch_add(1, std::memory_order_seq_cst) + 1;
        if (active >= p.m_worker_count && p.m_rescue != nullptr)
            p.m_rescue->on_all_awake();
        if (p.m_stop.load(std::memory_order_acquire))
            return nullptr;
        if (spare && std::chrono::steady_clock::now() >= now + k_spare_idle)
            idle_too_long = true;
        // An idle crowded pool backs off its timed looks; queued work brings them back.
        backstop = timed_out && !work_visible(p) ? next_backstop(backstop) : k_backstop_first;
    }
}

void worker_main(pool& p, std::size_t index) {
    worker& w = p.m_workers[index];
    // For the overflow diagnosis (overflow_handler.hpp), in both modes: the handler's stack, and
    // this thread's own stack end registered beside the fiber stacks' guards.
    const overflow_signal_stack signal_stack;
    const thread_stack_guard own_stack_guard;
    context() = {&w, &p, nullptr};
    if (p.m_rescue != nullptr)
        p.m_rescue->on_thread_start(index);
    const bool budgeted = takes_cpu_place(p, w);
    if (budgeted) {
        cpu_budget::instance().enrol(w);
        take_cpu_place(p, w, false);
    }
    if (p.m_parking == nullptr || !run_worker_on_fibers(p, w)) {
        while (task* t = find_work_or_sleep(p, w))
            run_task(w, t);
    }
    if (budgeted)
        cpu_budget::instance().leave(w); // gives back its place
    context() = {};
}

// --- Helping while waiting ----------------------------------------------------------------------

bool run_own_until(function_ref<bool()> done) {
    for (;;) {
        if (done())
            return true;
        worker& w = *current_worker(); // re-read: a task may have migrated us
        task* t = w.m_deque.pop();
        if (t == nullptr)
            return false;
        run_task(w, t);
    }
}

namespace {
void help_outside(pool& p, function_ref<bool()> done);
} // namespace

void help_until(pool_core& core, function_ref<bool()> done) {
    // docs/tracing.md#observers (one load of a global while nothing observes).
    const wait_observation observed;
    if (current_worker() == nullptr) {
        help_outside(pool_of(core), done);
        return;
    }
    if (current_worker()->m_pool == current_pool() && run_own_until(done))
        return; // our own children first, as without fibers
    // On a worker: yield-park until done (docs/design.md#parking): the waiting task steps aside
    // on its fiber and its worker resumes it to re-check after running `patience` other tasks,
    // so nothing runs on top of its frame. Where parking is not allowed, help while waiting.
    // Patience doubles with every failed re-check, up to 64 tasks: a wait that turns true soon is
    // seen after about one task; a long one costs a park per 64 tasks run, not one per task.
    for (std::uint32_t patience = 1; !done();
         patience = std::min<std::uint32_t>(patience * 2, 64)) {
        if (!try_yield(patience)) {
            // A worker helps its own pool, whichever it waits on. Re-read: we may have migrated.
            help_on_worker(pool_of(*current_worker()->m_pool), done);
            return;
        }
    }
}

namespace {

// Helping nests every task it runs on the waiting frame's stack. On a fiber stack (where the
// bounds are known) it stops taking new work once less than a quarter of the stack, at most
// 1 MiB, is left, and only waits: a deep pile of waits that could not park then costs time
// instead of a stack overflow.
constexpr std::size_t k_help_headroom = std::size_t{1} << 20;

bool stack_headroom_low() noexcept {
    const fiber_info* f = context().fiber;
    if (f == nullptr || f->stack_bottom == nullptr)
        return false; // a native stack: its bounds are not tracked
    const char here = 0;
    const auto left =
        reinterpret_cast<std::uintptr_t>(&here) - reinterpret_cast<std::uintptr_t>(f->stack_bottom);
    return left < std::min(k_help_headroom, f->stack_size / 4);
}

} // namespace

void help_on_worker(pool& p, function_ref<bool()> done) {
    for (unsigned idle_rounds = 0;;) {
        if (done())
            return;
        if (stack_headroom_low()) { // wait without nesting more (see k_help_headroom)
            back_off(idle_rounds++);
            continue;
        }
        worker& w = *current_worker(); // re-read after every task: migration-safe
        if (task* t = find_work(p, w, false)) {
            run_task(w, t);
            idle_rounds = 0;
            continue;
        }
        back_off(idle_rounds++);
    }
}

namespace {

void help_outside(pool& p, function_ref<bool()> done) {
    for (unsigned idle_rounds = 0;;) {
        if (done())
            return;
        if (run_one_outside(p)) {
            idle_rounds = 0;
            continue;
        }
        // Nothing to run: an arbitrary predicate cannot wake us, so poll with a growing pause.
        if (idle_rounds < 256)
            back_off(idle_rounds);
        else
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        ++idle_rounds;
    }
}

} // namespace

bool run_forked_above(task* popped, task* target) {
    for (;;) {
        worker& w = *current_worker();
        run_task(w, popped); // forked by the joining frame's code and not joined: a descendant
        popped = current_worker()->m_deque.pop();
        if (popped == nullptr)
            return false;
        if (popped == target)
            return true;
    }
}

bool run_one_outside(pool& p) {
    // Counted as active while holding a task, so shutdown cannot finish under us (see the
    // termination invariant above). seq_cst: same single order as the workers' decrements.
    p.m_active.fetch_add(1, std::memory_order_seq_cst);
    task* t = p.m_injected.try_pop();
    // relaxed: the counter only spreads outside helpers over victims; any value is correct.
    if (t == nullptr && p.m_workers.size() > 0)
        t = steal_from_others(
            p, nullptr, p.m_outside_rng.fetch_add(0x9e3779b97f4a7c15ull, std::memory_order_relaxed),
            false);
    if (t != nullptr) {
        // The task runs with its own pool as the current one (fj::fork etc. inside it).
        pool_core* saved = context().pool;
        context().pool = &p;
        t->run();
        context().pool = saved;
    }
    if (p.m_active.fetch_sub(1, std::memory_order_seq_cst) == 1 && p.is_closed())
        p.m_sleep.notify_all(); // we may have been the last one awake: let the workers re-check
    return t != nullptr;
}

bool try_run_one(pool& p) {
    if (worker* w = own_worker(p)) {
        if (task* t = find_work(p, *w, false)) {
            run_task(*w, t);
            return true;
        }
        return false;
    }
    return run_one_outside(p);
}

} // namespace fj::detail
