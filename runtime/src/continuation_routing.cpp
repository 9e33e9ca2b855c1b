// Where a continuation (future::then) is queued: on the scheduler that finished its antecedent, or,
// when then() finds the antecedent ready already, on the antecedent's home pool if that still
// accepts work, else on the current scheduler (docs/design.md#composition). when_all and when_any
// take their home from current_scheduler_id().
#include "scheduler_registry.hpp"

#include <forkjoin/async.hpp> // current_scheduler()
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

void schedule_continuation(task* t, std::uint64_t& home) noexcept {
    scheduler* s = current_scheduler_or_null();
    if (s ==
        nullptr) { // unreachable: tasks finish inside a scheduler's context; run it, never lose it
        t->run();
        return;
    }
    home = s->m_id;
    if (worker* w = s->own_worker()) {
        try {
            s->push_local(*w, t); // hot in this cache, and the worker usually runs it next
            return;
        } catch (...) { // the deque could not grow: the injection queue needs no memory
        }
    }
    s->inject(t); // from one of s's own tasks: accepted even while s drains (see inject())
}

void start_continuation(task* t, std::uint64_t antecedent_home, std::uint64_t& home) {
    scheduler* s = current_scheduler_or_null();
    if (s != nullptr && (antecedent_home == 0 || s->m_id == antecedent_home)) {
        // Inside the antecedent's own pool (the common case, no lock) or with no home to go to.
        home = s->m_id;
        if (worker* w = s->own_worker())
            s->push_local(*w, t);
        else
            s->inject(t);
        return;
    }
    if (antecedent_home != 0) {
        // Elsewhere: the antecedent's pool if it still exists and accepts work. Under the
        // registry's lock, so it cannot be destroyed while we inject.
        const bool queued = with_live_scheduler(antecedent_home, [&](scheduler& home_pool) {
            home = home_pool.m_id;
            try {
                home_pool.inject(t);
                return true;
            } catch (...) { // closed, or created before a fork() in this child: go elsewhere
                return false;
            }
        });
        if (queued)
            return;
    }
    scheduler& fallback = current_scheduler();
    home = fallback.m_id;
    if (worker* w = fallback.own_worker())
        fallback.push_local(*w, t);
    else
        fallback.inject(t); // throws fj::scheduler_closed after shutdown, before anything is queued
}

std::uint64_t current_scheduler_id() noexcept {
    const scheduler* s = current_scheduler_or_null();
    return s != nullptr ? s->m_id : 0;
}

} // namespace fj::detail
