// Sleep and wake-up (sleep.hpp; docs/design/sleep.md has the protocol's steps, invariant and
// proof).
#include "sleep/sleep.hpp"

#include "budget/places.hpp"
#include "observe/events.hpp"
#include "platform/cpu_quota.hpp"
#include "platform/cpus.hpp"
#include "sleep/crowding.hpp"
#include "state/active_count.hpp"
#include "state/spare_hooks.hpp"
#include "state/steal_hint.hpp"

#include <forkjoin/detail/pool_core.hpp>

namespace fj::detail {

bool work_visible(const pool& p, const worker* looker) {
    if (!p.m_injected.empty())
        return true; // exact, under the consumer lock: see injection_queue.hpp
    const bool leave_callers = looker != nullptr && leaves_callers_alone(p, *looker);
    // seq_cst loads, like the deques' (after the sleeper's barrier): see make_resumable().
    // Up to scan_end(): a vacant slot holds no work (state/worker_set.hpp).
    for (std::size_t i = 0, n = p.m_workers.scan_end(); i < n; ++i) {
        const worker& w = p.m_workers[i];
        if (w.m_resumable.load(std::memory_order_seq_cst) != nullptr)
            return true;
        if (leave_callers && w.m_role == slot_role::caller)
            continue; // its caller drains it; find_work() would not take from it
        if (!w.m_deque.empty_hint())
            return true;
    }
    return false;
}

namespace {

// Each side of the fence pair of docs/design/sleep.md#searching. Only the asymmetric formulation
// needs it: in the symmetric one the publication, the pusher's load and the searcher's RMWs and
// re-check are all seq_cst, which orders them alike. ThreadSanitizer builds, which always take the
// symmetric formulation (asymmetric_barrier.cpp), compile it out: TSan does not model fences.
void searching_fence(const pool& p) noexcept {
#if !defined(__SANITIZE_THREAD__)
    if (p.m_asymmetric_barrier)
        std::atomic_thread_fence(std::memory_order_seq_cst);
#else
    (void)p;
#endif
}

} // namespace

void wake_for_work(pool& p, pusher who) noexcept {
    // A crowded pool (docs/design/crowded.md): with the CPUs all taken by awake workers, a woken
    // sleeper would only take a CPU from one of them. A worker that pushed is awake and takes the
    // item itself (its join pops it, its loop looks at its own deque and slot first); a sleeper's
    // timed sleep covers a pusher that blocks in the kernel first.
    if (who == pusher::own_worker &&
        awake_fill_cpus(threads_running_tasks(p), p.m_sleepers.waiters(),
                        run_capacity(p, p.m_cpus.load(std::memory_order_relaxed))))
        return;
    // Wake one only when nobody searches (docs/design/sleep.md#searching). The fence orders the
    // publication before the load that decides: in the asymmetric formulation the publication is
    // a plain store, and a searcher that this pusher leaves its work to is not covered by any
    // heavy barrier. It pairs with the fence go_idle() takes after that searcher stopped (or
    // after the woken thread took its ticket), before the re-check: either the re-check sees the
    // work, or the load here sees the searcher gone and wakes one.
    searching_fence(p);
    (void)p.m_sleep.notify_one_unless_searching();
}

bool stop_searching(pool& p, bool found_work) noexcept {
    const sleep_word::key was = p.m_sleepers.stop_searching();
    const bool last = sleep_word::searching_of(was) == 1;
    // The last searcher that found work wakes the next (Go's and Tokio's rule): the work it
    // found may have company, and the pushes meanwhile woke nobody because it searched. One that
    // found none goes on to go_idle(), whose re-check covers those pushes.
    if (found_work && last && sleep_word::waiters_of(was) != 0)
        wake_next_searcher(p);
    return last;
}

void wake_next_searcher(pool& p) noexcept {
    (void)p.m_sleep.notify_one_unless_searching();
}

// publish_work()'s slow path (pool_core.hpp): a worker of the pool has just pushed onto its own
// deque or resumable slot, and saw sleepers, or (in a pool that samples its victims) searchers.
void notice_push(pool_core& core) noexcept {
    pool& p = pool_of(core);
    // Only a pool that samples reads the hint (its notice mask has the searchers). Named for the
    // searchers, and for the sleeper this push may wake: its first look tries the hint first.
    if ((core.m_push_notice & sleep_word::k_searchers) != 0) {
        if (const worker* w = own_worker(core))
            point_searchers_at(p, *w);
    }
    // Loads later than the pusher's seq_cst one (coherence: no older value), so this sees no
    // sleeper only if the one seen has left since, awake.
    if (p.m_sleepers.waiters() != 0)
        wake_for_work(p, pusher::own_worker);
}

void wake_all(pool& p) noexcept {
    p.m_sleep.notify_all(true);
}

namespace {

// Leaves a prepared wait without sleeping. A thread that had to take a ticket on the way out
// (sleep_word::cancel_wait()) holds the searching place that came with it, and passes the wake-up
// on as a searcher that found work does: it is going to take work, or to leave.
void cancel_idle(pool& p) noexcept {
    if (p.m_sleep.cancel_wait())
        stop_searching(p, true);
}

// A thread leaves the active count (going to sleep, or leaving the pool). `closed` was read
// before the caller's last re-check of the queues found them empty. The last one out of a closed
// pool with nothing parked stops it (the termination invariant, state/pool.hpp), unless work
// has appeared since its re-check: then it is counted again and goes to take it.
last_out leave_active_after_recheck(pool& p, bool closed) noexcept {
    // seq_cst (inside): the termination invariant needs a single order of these decrements with
    // the queue re-checks and the helpers' increments. A parked task is pending work too
    // (docs/design/parking.md): it is counted in m_parked until a worker takes its record from a
    // queue.
    const last_out out =
        leave_after_recheck(p.m_active, closed, p.m_parked, [&p] { return work_visible(p); });
    if (out == last_out::stops) {
        // Last one awake, nothing queued, nothing can come: stop everybody.
        p.m_stop.store(true, std::memory_order_release); // pairs with the acquire loads of m_stop
        wake_all(p);
    }
    return out;
}

} // namespace

idle_check go_idle(pool& p, const worker* looker) noexcept {
    // 1. Prewait (the steps of docs/design/sleep.md#steps).
    const auto key = p.m_sleep.prepare_wait();
    // 2. The sleeper's half of the asymmetric StoreLoad barrier: after it, any push whose sleeper
    //    check missed our prewait is visible to the re-check below. Paid only by a sleeper that
    //    found no other thread counted: a push whose check read a count of zero is then seen by
    //    the first sleeper counted after that read, which found the count at zero and so paid
    //    it; a push whose check read a count above zero notifies
    //    (docs/design/sleep.md#one-barrier-per-idle-gap).
    //    A sleeper that skips it still takes a seq_cst fence in that formulation: the other half
    //    of the fence pair with a pusher that left its work to a searcher (wake_for_work(); the
    //    searcher, or the woken thread that took a ticket, comes through here before it sleeps:
    //    docs/design/sleep.md#searching). The heavy barrier is a fence too.
    if (p.m_asymmetric_barrier && sleep_word::waiters_of(key) == 0)
        heavy_barrier();
    else
        searching_fence(p);
    // 3. The pool has stopped: no sleep.
    if (p.m_stop.load(std::memory_order_acquire)) {
        cancel_idle(p);
        return idle_check::stopped;
    }
    // 4. Read the closed flag before re-checking the queues: once it is set, every accepted
    //    submission has swung the injection queue's tail, so the re-check sees it (a producer
    //    still linking its node counts as present). seq_cst load of the tail word.
    const bool closed = p.m_injected.is_closed();
    // 5. Work seen that this worker would take: back to finding it. (A deque it leaves alone
    //    would only send it round again, spinning beside the caller that owns it.)
    if (work_visible(p, looker)) {
        cancel_idle(p);
        return idle_check::work_in_sight;
    }
    // 6. Leave the active count; the last one out of a closed, drained pool stops it.
    switch (leave_active_after_recheck(p, closed)) {
    case last_out::stops:
        cancel_idle(p);
        return idle_check::stopped_it;
    case last_out::work_appeared: // counted again
        cancel_idle(p);
        return idle_check::work_in_sight;
    case last_out::not_last:
        break;
    }
    return idle_check::left;
}

slept sleep_until_woken(pool& p, worker& w, std::chrono::milliseconds timeout) {
    w.m_stats.sleeps.bump();
    if (w.observed()) [[unlikely]]
        on_sleep_begin(w);
    // 7. Commit the wait. Asleep, a worker holds no place in the budget of running workers; it
    //    takes one back below, before it counts itself awake.
    cpu_budget::release_if_held(w);
    const auto began = std::chrono::steady_clock::now();
    bool woken = true; // took a ticket, and with it a searching place
    if (timeout.count() != 0)
        woken = p.m_sleep.commit_wait_until(began + timeout);
    else
        p.m_sleep.commit_wait();
    // Woken (or timed out): the budget place first, still counted asleep (the rescue sees the
    // worker idle meanwhile).
    take_cpu_place(p, w, true);
    w.m_stats.wakeups.bump();
    if (w.observed()) [[unlikely]]
        on_sleep_end(w);
    // Then count itself active again. seq_cst: the termination invariant's single order; and the
    // Dekker pair with the rescue monitor's disarm (spare_hooks::on_all_awake()).
    const std::uint32_t active = p.m_active.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (active >= p.m_worker_count && p.m_spare_hooks != nullptr)
        p.m_spare_hooks->on_all_awake();
    return {woken, began};
}

bool leave_unless_work(pool& p) noexcept {
    switch (go_idle(p, nullptr)) {
    case idle_check::work_in_sight:
        return false;
    case idle_check::stopped:
        // With the pool stopped nothing waits on the count; it goes all the same.
        p.m_active.fetch_sub(1, std::memory_order_seq_cst); // seq_cst: as every m_active update
        return true;
    case idle_check::stopped_it:
        return true;
    case idle_check::left:
        cancel_idle(p); // leaves the pool instead of sleeping
        return true;
    }
    return true;
}

std::uint32_t current_cpus(pool& p, std::chrono::steady_clock::time_point now) noexcept {
    // Of the workers that find the last read old at once, the one whose compare-exchange moves
    // the time stamp re-reads. relaxed throughout: a hint; a stale count costs a wake-up or some
    // parallelism until the next re-read, never a task.
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

} // namespace fj::detail
