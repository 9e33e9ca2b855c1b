// fj::scheduler, the handle: each member forwards to the pool it owns (pool.hpp). The checks that
// guard the handle's own lifetime live here: a pool cannot wait for itself to finish.
#include "lifecycle/lifecycle.hpp"
#include "loop/helping.hpp"

#include <cstdio>
#include <exception>

#include <forkjoin/errors.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj {
namespace {

scheduler_options with_workers(std::size_t workers) {
    scheduler_options o;
    o.workers = workers;
    return o;
}

// True if the calling thread runs one of p's tasks (on a worker, or helping as an outside thread).
bool inside(const detail::pool_core& p) noexcept {
    return detail::own_worker(p) != nullptr || detail::current_pool() == &p;
}

} // namespace

scheduler::scheduler() : scheduler(scheduler_options{}) {}

scheduler::scheduler(std::size_t workers) : scheduler(with_workers(workers)) {}

scheduler::scheduler(const scheduler_options& options)
    : m_pool(detail::make_pool(*this, options)) {}

scheduler::~scheduler() {
    if (inside(*m_pool)) {
        std::fputs("fj::scheduler destroyed from one of its own tasks: it cannot wait for itself. "
                   "Destroy it from outside the pool.\n",
                   stderr);
        std::terminate();
    }
    detail::destroy_pool(&detail::pool_of(*m_pool));
}

void scheduler::shutdown() {
    if (inside(*m_pool))
        detail::throw_logic_error(
            "fj::scheduler::shutdown() called from one of the scheduler's own tasks: it would wait "
            "for itself to finish. Call shutdown() from outside the pool.");
    detail::shutdown(detail::pool_of(*m_pool));
}

const scheduler_options& scheduler::options() const noexcept {
    return detail::pool_of(*m_pool).m_options;
}

bool scheduler::is_closed() const noexcept {
    return detail::pool_of(*m_pool).is_closed();
}

std::size_t scheduler::worker_index_limit() const noexcept {
    return detail::pool_of(*m_pool).m_workers.capacity();
}

bool scheduler::try_run_one() {
    return detail::try_run_one(detail::pool_of(*m_pool));
}

scheduler_stats scheduler::stats() const {
    return detail::snapshot(detail::pool_of(*m_pool));
}

} // namespace fj
