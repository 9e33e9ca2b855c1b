// A pool's workers in the process's budget of running workers (cpu_budget.hpp,
// docs/design/cpu-budget.md): which take a place, and how they wait for one.
#pragma once

#include "budget/cpu_budget.hpp"
#include "state/pool.hpp"

namespace fj::detail {

// Whether worker w takes a place in the budget: every worker of a pool that shares it, but no
// spare (a spare stands in for a blocked worker) and no caller's slot (its thread is the caller's,
// which runs whether or not the pool lets it).
inline bool takes_cpu_place(const pool& p, const worker& w) noexcept {
    return p.m_shares_cpu_budget && w.m_role == slot_role::worker;
}

// Waits for a place in the budget, if w takes one. A closing pool drains without one: its
// shutdown must not wait on other pools' work. `counted_asleep`: see cpu_budget::acquire().
inline void take_cpu_place(pool& p, worker& w, bool counted_asleep) {
    if (!takes_cpu_place(p, w))
        return;
    cpu_budget::instance().acquire(
        w,
        [&p]() noexcept {
            return p.m_injected.is_closed() || p.m_stop.load(std::memory_order_acquire);
        },
        counted_asleep);
}

} // namespace fj::detail
