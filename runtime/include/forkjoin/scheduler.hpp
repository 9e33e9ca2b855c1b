// fj::scheduler: a pool of worker threads, each with its own work-stealing deque, plus one global
// FIFO injection queue for work arriving from outside the pool.
//
//   fork(f)             on one of this pool's workers: push f to the front of that worker's deque
//                       (thieves take from the back); elsewhere: the same as submit(f).
//   submit(f)           from any thread: append f to the injection queue (FIFO).
//   join(a, b)          run a and b, b possibly in parallel; allocation-free; returns both results.
//   reschedule_until(p) return once p() holds; meanwhile run other tasks (help while waiting).
//   execute(f)          run f as a task of this pool and wait for it: inside f, the free
//                       functions and algorithms (fj::async, fj::parallel_for, ...) use this pool.
//   shutdown()          finish everything submitted, then join the workers. Later submits from
//                       outside throw fj::scheduler_closed. The destructor calls it.
//
// A scheduler is a handle: it owns one pool (runtime/src/state/pool.hpp) and shuts it down when
// destroyed. The inline paths are functions over the pool's public part (detail/fork_join.hpp).
// Design, invariants and protocols: docs/design/index.md.
#pragma once

#include "detail/callable_check.hpp"
#include "detail/caller.hpp"
#include "detail/fork_join.hpp"
#include "detail/invoke.hpp"
#include "detail/pool_core.hpp"
#include "future.hpp"
#include "options.hpp"
#include "stats.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

namespace fj {

class scheduler {
public:
    // Default options: fj::default_worker_count() workers (FJ_WORKERS, else one per CPU in the
    // affinity mask, lowered to a cgroup CPU quota).
    scheduler();
    // Exactly `workers` workers (0 = the default count).
    explicit scheduler(std::size_t workers);
    explicit scheduler(const scheduler_options& options);
    ~scheduler();

    scheduler(const scheduler&) = delete;
    scheduler& operator=(const scheduler&) = delete;

    std::size_t worker_count() const noexcept { return m_pool->m_worker_count; }
    const scheduler_options& options() const noexcept;

    template <class F>
    future<detail::task_result_t<F>> submit(F&& fn) {
        return detail::submit_to(*m_pool, std::forward<F>(fn));
    }

    template <class F>
    future<detail::task_result_t<F>> fork(F&& fn) {
        return detail::fork_in(*m_pool, std::forward<F>(fn));
    }

    template <class A, class B>
    detail::join_in_result_t<A, B> join(A&& a, B&& b) {
        return detail::join_in(*m_pool, std::forward<A>(a), std::forward<B>(b));
    }

    template <class Predicate>
    void reschedule_until(Predicate&& done) {
        detail::reschedule_in(*m_pool, std::forward<Predicate>(done));
    }

    // Runs fn() as a task of this pool, waits for it and returns its result or rethrows its
    // exception. Inside fn, this pool is the current scheduler, so free functions and algorithms
    // without a scheduler argument run here (oneTBB's task_arena::execute, rayon's
    // ThreadPool::install). Called from one of this pool's own tasks, it calls fn() directly.
    // Called outside every pool, the calling thread runs fn() itself as one of the pool's threads
    // while the workers steal what it forks (docs/design/callers.md), or, with every caller's
    // slot taken, queues it and blocks; a task of another pool queues it and parks. Throws
    // std::invalid_argument for an empty callable and fj::scheduler_closed once shutdown() has
    // begun, before anything runs.
    template <class F>
    detail::task_result_t<F> execute(F&& fn) {
        detail::check_callable(fn);
        if (detail::current_pool() == m_pool)
            return detail::invoke(fn);
        detail::caller_scope caller(*m_pool); // enters only from outside every pool
        if (caller.entered())
            return detail::invoke(fn);
        return submit(std::forward<F>(fn)).get();
    }

    // Every index fj::current_worker_index() gives a thread of this pool is below this: its
    // workers', its spares' and its callers' slots (a per-thread scratch array of this size
    // never overflows).
    std::size_t worker_index_limit() const noexcept;

    // Runs one pending task of this scheduler on the calling thread, if there is one.
    bool try_run_one();

    void shutdown();
    bool is_closed() const noexcept;

    // True if the calling thread is one of this scheduler's workers.
    bool on_worker_thread() const noexcept { return detail::own_worker(*m_pool) != nullptr; }

    scheduler_stats stats() const;

private:
    friend detail::pool_core& detail::pool_of_handle(const scheduler& s) noexcept;

    detail::pool_core* const m_pool; // owned: a detail::pool, destroyed with the handle
};

// The runtime's way from a handle to its pool (continuation routing, the default scheduler).
inline detail::pool_core& detail::pool_of_handle(const scheduler& s) noexcept {
    return *s.m_pool;
}

} // namespace fj
