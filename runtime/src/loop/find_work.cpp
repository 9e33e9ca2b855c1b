// Where workers (and helping threads) find work.
//
// Find-work order for a worker (docs/design/find-work.md):
//   0. at its loop's top level only: a parked task it has just made resumable (worker.hpp's
//      m_resumable; docs/design/parking.md);
//   1. every k_injection_period-th look: the injection queue first, so a worker with a long local
//      backlog still starts outside submissions (Go's scheduler does this every 61 ticks);
//   2. its own deque (newest first: the task it forked last, hot in cache);
//   3. steal from other workers, starting at a random victim (oldest first: the biggest pieces;
//      at top level, a victim's resumable parked task before its deque);
//   4. the injection queue.
// A searcher's later looks while it spins sample instead (find_work_sampled, state/steal_hint.hpp).
#include "loop/find_work.hpp"

#include "observe/events.hpp"
#include "state/steal_hint.hpp"

#include <forkjoin/detail/observe.hpp>

namespace fj::detail {

namespace {

constexpr std::uint32_t k_injection_period = 61;

// A resumable parked task from w's slot (worker.hpp), or nullptr. The relaxed load keeps the
// common empty case to a read of a line that is rarely written; acquire on the exchange pairs
// with the release store that published the record (its fiber handle was written before).
task* take_resumable(worker& w) noexcept {
    if (w.m_resumable.load(std::memory_order_relaxed) == nullptr)
        return nullptr;
    return w.m_resumable.exchange(nullptr, std::memory_order_acquire);
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

// One look at `victim` by self (null: a thread outside the pool): its resumable parked task (at
// top level) or its oldest task, or nullptr. leave_callers: skip a caller's deque.
task* probe(worker* self, worker& victim, bool at_top_level, bool leave_callers) {
    // A waiter its worker made resumable while busy goes first: it is the oldest work there
    // (the continuation of a join), and someone is waiting on it.
    task* t = at_top_level ? take_resumable(victim) : nullptr;
    if (t == nullptr && leave_callers && victim.m_role == slot_role::caller)
        return nullptr;
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
    return nullptr;
}

// Where a look's failed probes start: failed_steals when it begins (0 for an outside thread).
std::uint64_t failed_so_far(const worker* self) noexcept {
    return self != nullptr ? self->m_stats.failed_steals.get() : 0;
}

// A look that began at `failed_at_start` has stolen t: its failed probes are what finding the
// victim cost (worker_stats::failed_before_steal).
task* stolen_after(worker* self, task* t, std::uint64_t failed_at_start) noexcept {
    if (self != nullptr)
        self->m_stats.failed_before_steal.add(self->m_stats.failed_steals.get() - failed_at_start);
    return t;
}

// One pass over the other slots from a random start (steal_from_others); its failed probes count
// from failed_at_start.
task* steal_pass(pool& p, worker* self, std::uint64_t random, bool at_top_level, bool leave_callers,
                 std::uint64_t failed_at_start) {
    const std::size_t n = p.m_workers.scan_end(); // retired spares' slots at the end skipped
    const std::size_t start = static_cast<std::size_t>(random % n);
    for (std::size_t i = 0; i < n; ++i) {
        worker& victim = p.m_workers[(start + i) % n];
        if (&victim == self)
            continue;
        if (task* t = probe(self, victim, at_top_level, leave_callers))
            return stolen_after(self, t, failed_at_start);
    }
    return nullptr;
}

// A probe of the steal hint's victim (state/steal_hint.hpp), if one is named other than w, and
// the hint cleared if that victim had nothing. relaxed: a hint; a stale one costs one failed probe.
task* probe_hint(pool& p, worker& w, bool at_top_level, bool leave_callers) {
    const std::uint32_t hint = p.m_steal_hint.load(std::memory_order_relaxed);
    if (hint >= p.m_workers.size() || hint == w.m_index)
        return nullptr;
    worker& victim = p.m_workers[hint];
    if (task* t = probe(&w, victim, at_top_level, leave_callers))
        return t;
    // Stale only if this look reached the deque: a worker that leaves callers alone did not.
    if (!(leave_callers && victim.m_role == slot_role::caller))
        clear_stale_hint(p, hint);
    return nullptr;
}

} // namespace

task* steal_from_others(pool& p, worker* self, std::uint64_t random, bool at_top_level) {
    // A pool of one worker leaves its callers' deques to them (state/pool.hpp).
    const bool leave_callers = self != nullptr && leaves_callers_alone(p, *self);
    return steal_pass(p, self, random, at_top_level, leave_callers, failed_so_far(self));
}

namespace {

// A task taken from the injection queue. A parked task's record is not counted: its resumption
// takes the count back (fiber_runtime::resume), and the observers leave it out likewise.
task* taken_injected(worker& w, task* t) noexcept {
    w.m_stats.injected_taken.bump();
    if (w.observed()) [[unlikely]]
        on_take_injected(w, t);
    return t;
}

// The steal step of a full look: in a pool that samples, the hint's victim first (a worker woken
// for a push finds the pusher there), then a pass over every other slot.
task* steal_full(pool& p, worker& w, bool at_top_level) {
    const bool leave_callers = leaves_callers_alone(p, w);
    const std::uint64_t failed_at_start = failed_so_far(&w);
    if (samples_victims(p.m_worker_count)) {
        if (task* t = probe_hint(p, w, at_top_level, leave_callers))
            return t;
    }
    return steal_pass(p, &w, w.next_random(), at_top_level, leave_callers, failed_at_start);
}

// The steal step of a sampled look (docs/design/find-work.md#sampling): the hint's victim, then
// k_sampled_victims random other workers (a victim may come up twice: drawing distinct ones would
// cost more than the rare repeat). Slots past a scan_end() read earlier are never probed.
task* steal_sampled(pool& p, worker& w) {
    const std::size_t n = p.m_workers.scan_end();
    const bool leave_callers = leaves_callers_alone(p, w);
    const std::uint64_t failed_at_start = failed_so_far(&w);
    if (task* t = probe_hint(p, w, true, leave_callers))
        return t;
    for (std::size_t k = 0; k < k_sampled_victims; ++k) {
        // Another worker than w, uniformly (n > k_sampled_victims + 1: see samples_victims).
        const std::size_t i = (w.m_index + 1 + w.next_random() % (n - 1)) % n;
        if (task* t = probe(&w, p.m_workers[i], true, leave_callers))
            return stolen_after(&w, t, failed_at_start);
    }
    return nullptr;
}

// One look in the order above; `sampled`: step 3 is steal_sampled's instead of a full pass.
task* look_for_work(pool& p, worker& w, bool at_top_level, bool sampled) {
    // A waiter this worker has just made resumable first, before the periodic look at the
    // injection queue: the last to finish a join continues it (docs/design/parking.md). Left on
    // the deque, one completion in 61 ran a queued task before its waiter.
    if (at_top_level) {
        if (task* t = take_resumable(w))
            return t;
    }
    // A caller (docs/design/callers.md) takes no queued submission: one could be long and
    // unrelated, and would keep its call from returning; the workers start them.
    const bool takes_injected = w.m_role != slot_role::caller;
    if (++w.m_tick % k_injection_period == 0 && takes_injected) {
        if (task* t = p.m_injected.try_pop())
            return taken_injected(w, t);
    }
    if (!w.m_deque.owner_sees_empty()) {
        if (task* t = w.m_deque.pop())
            return t;
    }
    if (p.m_workers.scan_end() > 1) {
        task* t = sampled ? steal_sampled(p, w) : steal_full(p, w, at_top_level);
        if (t != nullptr)
            return t;
    }
    if (takes_injected) {
        if (task* t = p.m_injected.try_pop())
            return taken_injected(w, t);
    }
    return nullptr;
}

} // namespace

task* find_work(pool& p, worker& w, bool at_top_level) {
    return look_for_work(p, w, at_top_level, false);
}

task* find_work_sampled(pool& p, worker& w) {
    // The pool's worker count, as for its pushes' notice (pool_core::m_push_notice): a pool that
    // samples is one whose pushes name the hint.
    return look_for_work(p, w, true, samples_victims(p.m_worker_count));
}

} // namespace fj::detail
