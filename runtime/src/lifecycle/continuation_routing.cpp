// Where a continuation (future::then) is queued: on the pool that finished its antecedent, or,
// when then() finds the antecedent ready already, on the antecedent's home pool if that still
// accepts work, else on the current pool (docs/design/composition.md). when_all and when_any
// take their home from current_scheduler_id().
#include "lifecycle/pool_registry.hpp"

#include <new>

#include <forkjoin/async.hpp> // default_scheduler()
#include <forkjoin/detail/pool_core.hpp>

namespace fj::detail {
namespace {

// Queues t on p: on the calling worker's deque if it is one of p's (hot in this cache, and the
// worker usually runs it next), else in p's injection queue. Throws what push_local() (the
// deque could not grow) or inject() (closed, a pool from before a fork()) throws, before t is
// queued.
void queue_here(pool_core& p, task* t) {
    if (worker* w = own_worker(p))
        push_local(p, *w, t);
    else
        inject(p, t);
}

// The same, falling back to the injection queue when the deque cannot grow (it needs no memory).
void queue_on(pool_core& p, task* t) {
    try {
        queue_here(p, t);
    } catch (const std::bad_alloc&) {
        inject(p, t); // from one of p's own tasks: accepted even while p drains (see inject())
    }
}

} // namespace

void schedule_continuation(task* t, std::uint64_t& home) noexcept {
    pool_core* p = current_pool();
    if (p == nullptr) {
        // Completed outside every pool: a promise set by a plain thread. The continuation goes to
        // the default scheduler, as fj::async from that thread would; if that cannot take it (it
        // cannot be created, or the process is exiting and it has shut down), it runs here:
        // never lost.
        try {
            pool_core& fallback = pool_of_handle(default_scheduler());
            home = fallback.m_id;
            inject(fallback, t);
        } catch (...) {
            t->run();
        }
        return;
    }
    home = p->m_id;
    queue_on(*p, t); // noexcept: a task of p's own is accepted even after the close
}

void start_continuation(task* t, std::uint64_t antecedent_home, std::uint64_t& home) {
    pool_core* p = current_pool();
    if (p != nullptr && (antecedent_home == 0 || p->m_id == antecedent_home)) {
        // Inside the antecedent's own pool (the common case, no lock) or with no home to go to.
        home = p->m_id;
        queue_here(*p, t);
        return;
    }
    if (antecedent_home != 0) {
        // Elsewhere: the antecedent's pool if it still exists and accepts work. Under the
        // registry's lock, so it cannot be destroyed while we inject.
        const bool queued = with_live_pool(antecedent_home, [&](pool_core& home_pool) {
            home = home_pool.m_id;
            try {
                inject(home_pool, t);
                return true;
            } catch (...) { // closed, or created before a fork() in this child: go elsewhere
                return false;
            }
        });
        if (queued)
            return;
    }
    // The current pool, which is null here only outside every pool: the default scheduler's.
    pool_core& fallback = p != nullptr ? *p : pool_of_handle(default_scheduler());
    home = fallback.m_id;
    // Throws fj::scheduler_closed after shutdown, before anything is queued.
    queue_here(fallback, t);
}

std::uint64_t current_scheduler_id() noexcept {
    const pool_core* p = current_pool();
    return p != nullptr ? p->m_id : 0;
}

} // namespace fj::detail
