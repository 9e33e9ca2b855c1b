// A pool's public part: the few fields and out-of-line entry points that the inline fork, join,
// submit and reschedule_until paths (fork_join.hpp) need. Everything else a pool holds (the
// injection queue, the sleepers' mutex, the threads, parking, tracing, statistics) is in
// runtime/src/state/pool.hpp, whose detail::pool derives from this. fj::scheduler is a handle to
// one.
#pragma once

#include "asymmetric_barrier.hpp"
#include "current.hpp"
#include "function_ref.hpp"
#include "sleep_word.hpp"
#include "task.hpp"
#include "worker.hpp"

#include <cstddef>
#include <cstdint>

namespace fj {
class scheduler;
} // namespace fj

namespace fj::detail {

struct pool_core {
    pool_core(fj::scheduler& owner, std::uint64_t pool_id, std::size_t workers,
              bool use_asymmetric_barrier, std::uint64_t push_notice) noexcept
        : m_handle(&owner), m_id(pool_id), m_worker_count(workers),
          m_asymmetric_barrier(use_asymmetric_barrier), m_push_notice(push_notice) {}
    pool_core(const pool_core&) = delete;
    pool_core& operator=(const pool_core&) = delete;

    fj::scheduler* const m_handle; // what fj::current_scheduler() returns inside this pool's tasks
    const std::uint64_t m_id;      // unique in the process, never reused: a future state's m_home
    const std::size_t m_worker_count;  // the workers it was asked for (spare threads not counted)
    const bool m_asymmetric_barrier;   // see asymmetric_barrier.hpp
    const std::uint64_t m_push_notice; // the fields of m_sleepers that make a push call notice_push
    // The sleepers, their wake-ups and the searchers (runtime/src/state/event_count.hpp blocks on
    // it). Its own cache lines: every idle worker writes it, every push reads it.
    alignas(128) sleep_word m_sleepers;
};

// The pool whose task the calling thread is running, or null; its handle, or null.
inline pool_core* current_pool() noexcept {
    return context().pool;
}
inline fj::scheduler* current_scheduler_or_null() noexcept {
    pool_core* p = context().pool;
    return p != nullptr ? p->m_handle : nullptr;
}

// The pool a scheduler handle owns (scheduler.hpp).
pool_core& pool_of_handle(const fj::scheduler& s) noexcept;

// The calling thread's worker if it belongs to pool p.
inline worker* own_worker(const pool_core& p) noexcept {
    worker* w = current_worker();
    return (w != nullptr && w->m_pool == &p) ? w : nullptr;
}

// Out of line (runtime/src): the cold and slow paths.
// Appends t to p's injection queue and wakes a sleeper; throws fj::scheduler_closed (or
// std::logic_error in the child of a process fork) before t is queued.
void inject(pool_core& p, task* t);
// The same for an item whose running may end everything that keeps p alive before this call
// returns (a coroutine moving to p: fj::resume_on). p's destruction waits for the call's last
// touch of p.
void inject_handing_over(pool_core& p, task* t);
// A thread outside every pool runs a blocking call's root as one of p's threads
// (docs/design/callers.md): enter_as_caller() gives it a caller's slot for the call and returns
// the slot's number, or npos when none is free (the call then queues its root); throws
// fj::scheduler_closed once p has begun to shut down. leave_as_caller() ends the call: what it
// forked and did not join goes to p's injection queue, and the thread's current pool is `outer`
// again.
std::size_t enter_as_caller(pool_core& p);
void leave_as_caller(pool_core& p, std::size_t slot, pool_core* outer) noexcept;
// A worker's push saw sleepers or searchers: points the searchers at it, wakes a sleeper if needed.
void notice_push(pool_core& p) noexcept;
// reschedule_until's slow path: run other tasks (p's, when the caller is outside every pool)
// until done() holds.
void help_until(pool_core& p, function_ref<bool()> done);
// fj::join's pop-back path: `popped` was on top of the calling worker's deque instead of the
// join's own branch `target`: a task the first branch forked without joining. Runs it and the
// others above `target`, newest first; true if `target` was popped back, false if it was stolen.
bool run_forked_above(task* popped, task* target);

// The pusher's half of the sleep protocol's Dekker pair (docs/design/sleep.md), for every store
// that makes work visible to the pool's workers: `publish(seq_cst)` makes the store, then the
// sleep word is read and notice_push() called if m_push_notice's fields show. With the asymmetric
// barrier the sleeper pays for the StoreLoad fence (publish(false): a release store and a compiler
// barrier), else the store is seq_cst (publish(true)).
template <class Publish>
inline void publish_work(pool_core& p, Publish&& publish) {
    if (p.m_asymmetric_barrier) [[likely]] {
        publish(false);
        light_barrier();
    } else {
        publish(true);
    }
    if (p.m_sleepers.any_of(p.m_push_notice)) [[unlikely]]
        notice_push(p);
}

// Pushes t to the calling worker's deque and wakes a sleeper if one sleeps. Throws only if the
// deque cannot grow, and then before t is published.
inline void push_local(pool_core& p, worker& w, task* t) {
    publish_work(p, [&](bool seq_cst) {
        if (seq_cst)
            w.m_deque.push_seq_cst(t);
        else
            w.m_deque.push(t);
    });
}

} // namespace fj::detail
