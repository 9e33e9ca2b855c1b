// A get() made outside every pool whose task is still queued while every worker of its pool
// sleeps runs the task itself, as std::future's deferred tasks and oneTBB's task_group::wait() do
// (docs/design/callers.md#take-over): the waiting thread would otherwise block for two thread
// wake-ups (a worker's and then its own). While a worker is awake the get() waits as before: a
// worker draining a queue of small tasks is ahead of a taker, whose claim costs the asymmetric
// barrier's heavy side. Only in a pool whose waiting tasks do not park: a caller runs on its own
// stack, not a fiber, so a taken task's waits (a channel, a latch, a future) would block this
// thread in the kernel where on a worker they park and let the worker run the task it waits for.
#include "lifecycle/pool_registry.hpp"
#include "state/pool.hpp"

#include <cstddef>

#include <forkjoin/detail/future_state.hpp>
#include <forkjoin/detail/pool_core.hpp>

namespace fj::detail {

bool run_queued_here(std::uint64_t home, completion& c, start_flag& start,
                     function_ref<void()> run) noexcept {
    constexpr std::size_t k_none = static_cast<std::size_t>(-1);
    if (home == 0 || current_worker() != nullptr || !c.may_take(start))
        return false;
    // 1. Enter the task's pool as a caller, so what the task forks and calls runs there. Under
    //    the registry's lock, so the pool cannot be destroyed before we are counted in it; once
    //    counted it cannot stop (docs/design/callers.md, step 1) until we leave.
    pool_core* pool = nullptr;
    std::size_t slot = k_none;
    with_live_pool(home, [&](pool_core& p) {
        if (p.m_sleepers.waiters() < pool_of(p).m_worker_count)
            return false; // a worker is awake and takes it soon
        if (pool_of(p).m_shares_cpu_budget)
            return false; // a caller takes no place in the budget: it would run beside them
        if (pool_of(p).m_parking != nullptr)
            return false; // its waits would block this thread where on a worker they park
        try {
            slot = enter_as_caller(p);
        } catch (...) { // closing, or made before a fork() in this child: its workers run it
            return false;
        }
        if (slot == k_none)
            return false; // no caller's slot free
        pool = &p;
        return true;
    });
    if (pool == nullptr)
        return false;
    // 2. Take the task over: exactly one of this and the worker that pops it from its queue
    //    runs it (completion::try_take(), the start-against-cancel race).
    const bool took = c.try_take(start);
    if (took) {
        // 3. Run it as the caller slot's task; the queued record is skipped where it is taken.
        worker& w = *current_worker();
        run_counted(w, nullptr, [&]() noexcept { run(); });
    }
    // 4. Leave: what the task forked and did not join goes to the pool's injection queue.
    leave_as_caller(*pool, slot, nullptr);
    return took;
}

} // namespace fj::detail
