// A thread outside every pool runs its own blocking parallel call as one of the pool's threads
// (docs/design/callers.md, whose step numbers the comments cite): it takes a caller's slot, runs
// the call's root on its own stack with the slot's deque as its own (the workers steal from it),
// and leaves when the root returns, with nothing of the pool's left on the slot.
#include "observe/events.hpp"
#include "sleep/sleep.hpp"
#include "state/active_count.hpp"
#include "state/pool.hpp"

#include <cstdint>
#include <memory>

#include <forkjoin/detail/pool_core.hpp>
#include <forkjoin/errors.hpp> // throw_scheduler_closed

namespace fj::detail {

namespace {

// The slot this thread held last, and in which pool (ids are never reused): tried first, so a
// thread that calls again and again takes the same slot, with its deque and cache still warm.
thread_local std::uint64_t t_last_pool = 0;
thread_local std::size_t t_last_slot = caller_slots::k_none;

// Takes back the count of step 1. The last thread out of a closed pool wakes the sleepers, so
// the last of them to go idle again finds the pool drained and stops it (sleep.cpp); our queues
// are empty (step 5), so there is nothing for us to re-check.
void uncount(pool& p) noexcept {
    if (leave_counted(p.m_active, p.m_injected))
        wake_all(p);
}

std::size_t claim(pool& p) {
    const std::size_t hint = t_last_pool == p.m_id ? t_last_slot : caller_slots::k_none;
    if (const std::size_t k = p.m_callers.claim_made(hint); k != caller_slots::k_none)
        return k;
    // Every made slot is held: make one (the pool's worker set has room for all of them).
    const std::size_t k = p.m_callers.claim_new([&p]() -> worker& {
        return p.m_workers.add([&p](std::size_t index) {
            auto w = std::make_unique<worker>(&p, index, p.m_options.initial_deque_capacity,
                                              slot_role::caller);
            on_slot_added(p, *w); // trace mode: its track; throws std::bad_alloc
            return w;
        });
    });
    // A new slot: workers asleep without a timeout go back to sleep with one (worker_loop.cpp),
    // now that a caller's push may skip waking them (docs/design/callers.md). Once per slot.
    if (k != caller_slots::k_none)
        wake_all(p);
    return k;
}

} // namespace

std::size_t enter_as_caller(pool_core& core) {
    pool& p = pool_of(core);
    refuse_in_forked_child(p);
    // A pool that profiles its whole run measures every call from outside as a submitted root:
    // it queues the root, as a call does with no slot free.
    if (p.m_callers.capacity() == 0 || p.m_whole_run_profile != nullptr)
        return caller_slots::k_none;
    // 1. Counted before anything else: the pool cannot stop while we are inside (the
    //    termination invariant), and 2. refused once shutdown() has begun, as a submission is.
    //    In one order with the close and the workers' last re-checks (active_count.hpp): either
    //    we see the closed flag, or the last worker sees our count.
    if (!enter_counted(p.m_active, p.m_injected)) {
        uncount(p);
        throw_scheduler_closed();
    }
    // 3. A slot of our own, or none free: the call queues its root instead.
    std::size_t k = caller_slots::k_none;
    try {
        k = claim(p);
    } catch (...) { // no memory for a new slot: queuing needs less
    }
    if (k == caller_slots::k_none) {
        uncount(p);
        return k;
    }
    t_last_pool = p.m_id;
    t_last_slot = k;
    // 4. From here the thread is the slot's worker: forks push onto its deque, joins pop it,
    //    waits help (a caller's stack is its own: its tasks never park), and its own pool is the
    //    current one.
    context().w = &p.m_callers.slot(k);
    context().pool = &p;
    return k;
}

void leave_as_caller(pool_core& core, std::size_t k, pool_core* outer) noexcept {
    pool& p = pool_of(core);
    worker& w = p.m_callers.slot(k);
    // 5. What the call forked and never joined, and a parked task it made resumable, go to the
    //    injection queue, where any worker takes them: the caller does not wait for work it did
    //    not wait for. Accepted while the pool closes: we are still counted (step 1), so the
    //    pool cannot stop before a worker has run them.
    bool handed_over = false;
    if (!w.m_deque.owner_sees_empty()) {
        while (task* t = w.m_deque.pop()) {
            p.m_injected.push(t, true);
            handed_over = true;
        }
    }
    // relaxed look first: almost always empty; acquire on the exchange pairs with the release
    // store that published the record (make_resumable).
    if (w.m_resumable.load(std::memory_order_relaxed) != nullptr) {
        if (task* r = w.m_resumable.exchange(nullptr, std::memory_order_acquire)) {
            p.m_injected.push(r, true);
            handed_over = true;
        }
    }
    if (handed_over)
        wake_for_work(p, pusher::other); // after the seq_cst pushes that published them
    // 6. Back to the thread it was, and the slot free for the next caller.
    context().w = nullptr;
    context().pool = outer;
    p.m_callers.release(k);
    // 7. Uncounted last: from here the pool may stop.
    uncount(p);
}

} // namespace fj::detail
