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
// (docs/design.md#sleep). The shutdown sequence is in scheduler.cpp and docs/design.md#shutdown.
#include "fiber_switch.hpp"
#include "guard_registry.hpp"
#include "overflow_handler.hpp"
#include "parking.hpp"
#include "trace_buffer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include <forkjoin/detail/cpu_relax.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {
thread_local constinit thread_context tl_context __attribute__((tls_model("initial-exec"))){};
int tls_anchor = 0;

__attribute__((noinline)) thread_context& context_out_of_line() noexcept {
    thread_context* p = &tl_context;
    asm volatile("" : "+r"(p)::"memory"); // not const, not pure: re-evaluated at every call
    return *p;
}
} // namespace fj::detail

namespace fj {
namespace {

constexpr std::uint32_t k_injection_period = 61;
// How long worker 0 sleeps before it comes back to release a burst's unused task memory (the
// central pool's decay is 10 s, so memory goes back within 11 s of its last use; block_cache.hpp).
constexpr std::chrono::milliseconds k_idle_block_release_period{1000};

using detail::cpu_relax;

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

void scheduler::run_task(detail::worker& w, detail::task* t) noexcept {
    // A worker's own tasks run with its scheduler as the current one, also when the worker is
    // nested inside a foreign scheduler's task (which it ran through that scheduler's
    // try_run_one() or reschedule_until(), and which set tl_context.s to its own scheduler).
    scheduler* const saved = detail::context().s;
    detail::context().s = w.m_owner;
    detail::run_counted(w, t, [t]() noexcept { t->run(); });
    detail::context().s = saved; // context() again: the task may have moved us to another thread
}

namespace {

// A resumable parked task from w's slot (worker.hpp), or nullptr. The relaxed load keeps the
// common empty case to a read of a line that is rarely written; acquire on the exchange pairs
// with the release store that published the record (its fiber handle was written before).
detail::task* take_resumable(detail::worker& w) noexcept {
    if (w.m_resumable.load(std::memory_order_relaxed) == nullptr)
        return nullptr;
    return w.m_resumable.exchange(nullptr, std::memory_order_acquire);
}

} // namespace

detail::task* scheduler::steal_from_others(detail::worker* self, std::uint64_t random,
                                           bool at_top_level) {
    const std::size_t n = m_worker_count;
    const std::size_t start = static_cast<std::size_t>(random % n);
    for (std::size_t i = 0; i < n; ++i) {
        detail::worker& victim = *m_workers[(start + i) % n];
        if (&victim == self)
            continue;
        // A waiter its worker made resumable while busy goes first: it is the oldest work there
        // (the continuation of a join), and someone is waiting on it.
        detail::task* t = at_top_level ? take_resumable(victim) : nullptr;
        if (t != nullptr || victim.m_deque.steal(t) == detail::steal_result::success) {
            if (self != nullptr) {
                self->m_stats.steals.bump();
                if (self->m_trace != nullptr) [[unlikely]]
                    self->m_trace->record(detail::trace_kind::steal,
                                          static_cast<std::uint32_t>(victim.m_index));
            }
            return t;
        }
        if (self != nullptr)
            self->m_stats.failed_steals.bump();
    }
    return nullptr;
}

// A task taken from the injection queue. A parked task's record is not counted: its resumption
// takes the count back (fiber_runtime::resume), and the trace leaves it out likewise.
static detail::task* taken_injected(detail::worker& w, detail::task* t) noexcept {
    w.m_stats.injected_taken.bump();
    if (w.m_trace != nullptr && !detail::is_park_record(t)) [[unlikely]]
        w.m_trace->record(detail::trace_kind::take_injected);
    return t;
}

detail::task* scheduler::find_work(detail::worker& w, bool at_top_level) {
    // A waiter this worker has just made resumable first, before the periodic look at the
    // injection queue: the last to finish a join continues it (docs/design.md#parking). Left on
    // the deque, one completion in 61 ran a queued task before its waiter.
    if (at_top_level) {
        if (detail::task* t = take_resumable(w))
            return t;
    }
    if (++w.m_tick % k_injection_period == 0) {
        if (detail::task* t = m_injected.try_pop())
            return taken_injected(w, t);
    }
    if (!w.m_deque.owner_sees_empty()) {
        if (detail::task* t = w.m_deque.pop())
            return t;
    }
    if (m_worker_count > 1) {
        if (detail::task* t = steal_from_others(&w, w.next_random(), at_top_level))
            return t;
    }
    if (detail::task* t = m_injected.try_pop())
        return taken_injected(w, t);
    return nullptr;
}

bool scheduler::work_visible() const {
    if (!m_injected.empty())
        return true; // exact, under the consumer lock: see injection_queue.hpp
    // seq_cst loads, like the deques' (after the sleeper's barrier): see make_resumable().
    for (const auto& w : m_workers)
        if (!w->m_deque.empty_hint() || w->m_resumable.load(std::memory_order_seq_cst) != nullptr)
            return true;
    return false;
}

// Returns the next task for worker w, sleeping while there is none; nullptr once the scheduler
// has stopped (closed, and every task finished).
//
// Invariant (termination): m_active counts workers that are not asleep plus helping threads
// inside run_one_outside(). A thread only takes a task while counted, and after the close only
// counted threads add work (an outside submit is ordered before the close, and then its item is in
// the injection queue, or after it, and then it is refused). So when the last counted worker
// finds the queue closed and every queue empty, no task can ever appear again.
detail::task* scheduler::find_work_or_sleep(detail::worker& w) {
    for (;;) {
        if (detail::task* t = find_work(w, true))
            return t;

        // 1. Spin: work often appears within microseconds (a sibling's next fork), and a sleep plus
        //    a wake-up costs tens of microseconds.
        const auto spin_until = std::chrono::steady_clock::now() + m_options.spin_before_sleep;
        detail::task* found = nullptr;
        for (unsigned round = 0; found == nullptr; ++round) {
            for (int i = 0; i < 32; ++i)
                cpu_relax();
            found = find_work(w, true);
            if ((round & 15) == 15 && std::chrono::steady_clock::now() >= spin_until)
                break;
        }
        if (found != nullptr)
            return found;

        // Going idle: a good moment to give back task memory a burst left unused for a while
        // (block_cache.hpp). Worker 0 sleeps with a timeout, so an idle program still returns a
        // burst's memory that appears, or decays, while every worker sleeps (freed futures on
        // an outside thread): one wake-up a second per pool, whatever its size.
        if (detail::idle_blocks_pending())
            detail::release_idle_blocks(false);
        const bool timed_sleep = w.m_index == 0;

        // 2. Sleep, with the event count's prewait / re-check / commit (docs/design.md#sleep).
        const auto key = m_sleep.prepare_wait();
        // The sleeper's half of the asymmetric StoreLoad barrier: after it, any push whose
        // sleeper check missed our prewait is visible to the re-check below.
        if (m_asymmetric_barrier)
            detail::heavy_barrier();
        if (m_stop.load(std::memory_order_acquire)) {
            m_sleep.cancel_wait();
            return nullptr;
        }
        // Read the closed flag before re-checking the queues: once it is set, every accepted
        // submission has swung the injection queue's tail, so the re-check sees it (a producer
        // still linking its node counts as present). seq_cst load of the tail word.
        const bool closed = m_injected.is_closed();
        if (work_visible()) {
            m_sleep.cancel_wait();
            continue;
        }
        // seq_cst: the termination invariant above needs a single order of these decrements with
        // the queue re-checks and the helpers' increments.
        // A parked task is pending work too (docs/design.md#parking): it is counted in m_parked
        // until a worker takes its record from a queue.
        if (m_active.fetch_sub(1, std::memory_order_seq_cst) == 1 && closed &&
            m_parked.load(std::memory_order_seq_cst) == 0) {
            // Last one awake, nothing queued, nothing can come: stop everybody.
            m_stop.store(true,
                         std::memory_order_release); // pairs with the acquire loads above/below
            m_sleep.cancel_wait();
            m_sleep.notify_all();
            return nullptr;
        }
        w.m_stats.sleeps.bump();
        if (w.m_trace != nullptr) [[unlikely]]
            w.m_trace->record(detail::trace_kind::sleep_begin);
        if (timed_sleep)
            m_sleep.commit_wait_until(key, std::chrono::steady_clock::now() +
                                               k_idle_block_release_period);
        else
            m_sleep.commit_wait(key);
        w.m_stats.wakeups.bump();
        if (w.m_trace != nullptr) [[unlikely]]
            w.m_trace->record(detail::trace_kind::sleep_end);
        m_active.fetch_add(1, std::memory_order_seq_cst);
        if (m_stop.load(std::memory_order_acquire))
            return nullptr;
    }
}

void scheduler::worker_main(std::size_t index) {
    detail::worker& w = *m_workers[index];
    // For the overflow diagnosis (overflow_handler.hpp), in both modes: the handler's stack, and
    // this thread's own stack end registered beside the fiber stacks' guards.
    const detail::overflow_signal_stack signal_stack;
    const detail::thread_stack_guard own_stack_guard;
    detail::context() = {&w, this, nullptr};
    if (m_parking == nullptr || !detail::run_worker_on_fibers(*this, w)) {
        while (detail::task* t = find_work_or_sleep(w))
            run_task(w, t);
    }
    detail::context() = {};
}

// --- Helping while waiting ----------------------------------------------------------------------

bool scheduler::run_own_until(detail::function_ref<bool()> done) {
    for (;;) {
        if (done())
            return true;
        detail::worker& w = *detail::current_worker(); // re-read: a task may have migrated us
        detail::task* t = w.m_deque.pop();
        if (t == nullptr)
            return false;
        w.m_owner->run_task(w, t);
    }
}

void scheduler::help_until(detail::function_ref<bool()> done) {
    // docs/tracing.md#profiler: waiting is neither work nor span (one load of a global when no
    // region exists).
    const detail::profile_pause_scope paused;
    if (detail::current_worker() == nullptr) {
        help_outside(done);
        return;
    }
    if (detail::current_worker()->m_owner == detail::current_scheduler_or_null() &&
        run_own_until(done))
        return; // our own children first, as without fibers
    // On a worker: yield-park until done (docs/design.md#parking): the waiting task steps aside
    // on its fiber and its worker resumes it to re-check after running `patience` other tasks,
    // so nothing runs on top of its frame. Where parking is not allowed, help while waiting.
    // Patience doubles with every failed re-check, up to 64 tasks: a wait that turns true soon is
    // seen after about one task; a long one costs a park per 64 tasks run, not one per task.
    for (std::uint32_t patience = 1; !done();
         patience = std::min<std::uint32_t>(patience * 2, 64)) {
        if (!detail::try_yield(patience)) {
            // A worker helps its own pool, whichever it waits on. Re-read: we may have migrated.
            detail::current_worker()->m_owner->help_on_worker(done);
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
    const detail::fiber_info* f = detail::context().fiber;
    if (f == nullptr || f->stack_bottom == nullptr)
        return false; // a native stack: its bounds are not tracked
    const char here = 0;
    const auto left =
        reinterpret_cast<std::uintptr_t>(&here) - reinterpret_cast<std::uintptr_t>(f->stack_bottom);
    return left < std::min(k_help_headroom, f->stack_size / 4);
}

} // namespace

void scheduler::help_on_worker(detail::function_ref<bool()> done) {
    for (unsigned idle_rounds = 0;;) {
        if (done())
            return;
        if (stack_headroom_low()) { // wait without nesting more (see k_help_headroom)
            back_off(idle_rounds++);
            continue;
        }
        detail::worker& w = *detail::current_worker(); // re-read after every task: migration-safe
        if (detail::task* t = find_work(w, false)) {
            run_task(w, t);
            idle_rounds = 0;
            continue;
        }
        back_off(idle_rounds++);
    }
}

void scheduler::help_outside(detail::function_ref<bool()> done) {
    for (unsigned idle_rounds = 0;;) {
        if (done())
            return;
        if (run_one_outside()) {
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

bool scheduler::pop_until(detail::task* popped, detail::task* target) {
    for (;;) {
        detail::worker& w = *detail::current_worker();
        run_task(w, popped); // forked by the joining frame's code and not joined: a descendant
        popped = detail::current_worker()->m_deque.pop();
        if (popped == nullptr)
            return false;
        if (popped == target)
            return true;
    }
}

bool scheduler::run_one_outside() {
    // Counted as active while holding a task, so shutdown cannot finish under us (see the
    // termination invariant above). seq_cst: same single order as the workers' decrements.
    m_active.fetch_add(1, std::memory_order_seq_cst);
    detail::task* t = m_injected.try_pop();
    // relaxed: the counter only spreads outside helpers over victims; any value is correct.
    if (t == nullptr && m_worker_count > 0)
        t = steal_from_others(
            nullptr, m_outside_rng.fetch_add(0x9e3779b97f4a7c15ull, std::memory_order_relaxed),
            false);
    if (t != nullptr) {
        // The task runs with its own scheduler as the current one (fj::fork etc. inside it).
        scheduler* saved = detail::context().s;
        detail::context().s = this;
        t->run();
        detail::context().s = saved;
    }
    if (m_active.fetch_sub(1, std::memory_order_seq_cst) == 1 && is_closed())
        m_sleep.notify_all(); // we may have been the last one awake: let the workers re-check
    return t != nullptr;
}

bool scheduler::try_run_one() {
    if (detail::worker* w = own_worker()) {
        if (detail::task* t = find_work(*w, false)) {
            run_task(*w, t);
            return true;
        }
        return false;
    }
    return run_one_outside();
}

} // namespace fj
