// The inline fast paths of a pool: submit, fork, join and reschedule_until, as functions over its
// public part (pool_core.hpp). fj::scheduler's members and the free functions in async.hpp call
// these; the slow paths they fall back to are out of line in runtime/src.
//
// The profiler's dispatch (docs/tracing.md#profiler) costs one load of a global and a branch per
// operation while no region exists: the measured paths are out of the inlined code (noinline).
#pragma once

#include "../future.hpp"
#include "callable_check.hpp"
#include "current.hpp"
#include "future_state.hpp"
#include "join_task.hpp"
#include "pool_core.hpp"
#include "profile_frame.hpp"
#include "task.hpp"
#include "wait.hpp"
#include "worker.hpp"

#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

namespace fj::detail {

template <class F>
auto make_fork_task(F&& fn) {
    return fork_task<std::decay_t<F>, task_result_t<F>>::make(std::forward<F>(fn));
}

// Inside an fj::profile region: the child is measured as a frame of its own, and its fork edge is
// registered under its future's state for get().
template <class F, class Start>
[[gnu::noinline]] future<task_result_t<F>> start_profiled(F&& fn, Start&& start) {
    if (context().profile == nullptr) // a region exists, but not around this task
        return start(std::forward<F>(fn));
    check_callable(fn);
    std::shared_ptr<profile_edge> edge = profile_fork_shared();
    future<task_result_t<F>> f = start(profiled_body<std::decay_t<F>>(edge, std::forward<F>(fn)));
    profile_register(future_access::state(f), std::move(edge));
    return f;
}

// submit without the profiler's hooks.
template <class F>
future<task_result_t<F>> submit_plain(pool_core& p, F&& fn) {
    check_callable(fn);
    auto* t = make_fork_task(std::forward<F>(fn));
    t->m_home = p.m_id;
    try {
        inject(p, t);
    } catch (...) {
        t->discard(); // never queued: nobody else knows it
        throw;
    }
    return future_access::make<task_result_t<F>>(t);
}

// From any thread: append fn to p's injection queue (FIFO).
template <class F>
future<task_result_t<F>> submit_to(pool_core& p, F&& fn) {
    if (profile_regions_exist()) [[unlikely]] {
        if (context().profile != nullptr)
            return start_profiled(std::forward<F>(fn), [&p](auto&& body) {
                return submit_plain(p, std::forward<decltype(body)>(body));
            });
    }
    if (p.m_whole_run_profile != nullptr) [[unlikely]] { // a root of the whole run's region
        check_callable(fn);
        auto edge = std::make_shared<profile_edge>();
        edge->region = p.m_whole_run_profile;
        return submit_plain(p, profiled_body<std::decay_t<F>>(edge, std::forward<F>(fn)));
    }
    return submit_plain(p, std::forward<F>(fn));
}

// always_inline: fork inlined whole into its caller before the profiler's dispatch existed, and
// must still (its cost per fork is the runtime's headline number).
template <class F>
[[gnu::always_inline]] inline future<task_result_t<F>> fork_on(pool_core& p, worker& w, F&& fn) {
    check_callable(fn);
    auto* t = make_fork_task(std::forward<F>(fn));
    t->m_home = p.m_id;
    try {
        push_local(p, w, t);
    } catch (...) { // the deque could not grow
        t->discard();
        throw;
    }
    w.m_stats.forks.bump();
    return future_access::make<task_result_t<F>>(t);
}

// On one of p's workers: push fn to the front of that worker's deque; elsewhere: submit_to().
template <class F>
future<task_result_t<F>> fork_in(pool_core& p, F&& fn) {
    worker* w = own_worker(p);
    if (w == nullptr)
        return submit_to(p, std::forward<F>(fn));
    if (profile_regions_exist()) [[unlikely]]
        return start_profiled(std::forward<F>(fn), [&p, w](auto&& body) {
            return fork_on(p, *w, std::forward<decltype(body)>(body));
        });
    return fork_on(p, *w, std::forward<F>(fn));
}

template <class A, class B>
using join_in_result_t = join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>>;

template <bool Measured, class A, class B>
join_in_result_t<A, B> join_plain(pool_core& p, A&& a, B&& b);

// Out of the inlined fast path (noinline): join stays as small as it was without the profiler.
template <class A, class B>
[[gnu::noinline]] join_in_result_t<A, B> join_profiled(pool_core& p, A& a, B& b) {
    // a continues the caller's frame; b is a child frame with a fork edge on this stack, joined
    // when the join returns (or throws).
    if (context().profile == nullptr) // a region exists, but not around this task
        return join_plain<false>(p, a, b);
    check_callable(b);
    profile_edge edge;
    profile_fork(edge);
    struct join_edge_on_exit {
        const profile_edge& edge;
        ~join_edge_on_exit() { profile_join(edge); }
    } joined{edge};
    auto measured_b = [&]() -> decltype(auto) {
        profile_scope scope(edge);
        return std::invoke(b);
    };
    return join_plain<false>(p, a, measured_b);
}

template <bool Measured, class A, class B>
join_in_result_t<A, B> join_plain(pool_core& p, A&& a, B&& b) {
    // One load of a global unless a profiler region exists; the measured join comes back here
    // with Measured = false.
    if constexpr (Measured) {
        if (profile_regions_exist()) [[unlikely]]
            return join_profiled(p, a, b);
    }
    using Ra = std::invoke_result_t<A&>;
    using Rb = std::invoke_result_t<B&>;
    check_callable(a);
    check_callable(b);
    worker* w = own_worker(p);
    if (w == nullptr) {
        // Not on this pool: run the whole join as one task there, so both branches and everything
        // they fork take the fast path, and wait for it.
        return submit_to(p, [&] { return join_plain<false>(p, a, b); }).get();
    }
    join_task<std::remove_reference_t<B>> task_b(b);
    push_local(p, *w, &task_b);
    w->m_stats.forks.bump();
    result_slot<Ra> result_a;
    result_a.run(a);
    // Pop task_b back by identity (the common case: inline, no call). Something else on top of
    // it is a task that a's code forked without joining: run_forked_above() runs those first.
    w = current_worker(); // re-read: a may have migrated
    task* popped = w->m_deque.pop();
    if (popped == &task_b ||
        (popped != nullptr && run_forked_above(popped, &task_b) && (w = current_worker()))) {
        // Not stolen: run it here unless a already failed (then b is cancelled before it starts).
        // w is current: nothing ran since it was read, or it was read again after the tasks
        // run_forked_above() ran (which may have migrated this frame).
        if (!result_a.failed())
            run_counted(*w, &task_b, [&]() noexcept { task_b.run_inline(); });
    } else {
        // Stolen: the thief may still be running it, and it references this frame. Wait even if
        // a failed.
        wait(task_b.m_done);
    }
    if (result_a.failed())
        std::rethrow_exception(result_a.error());
    if constexpr (std::is_void_v<Ra> && std::is_void_v<Rb>) {
        task_b.m_result.take();
    } else {
        return std::pair<join_value_t<Ra>, join_value_t<Rb>>{take_join_value(result_a),
                                                             take_join_value(task_b.m_result)};
    }
}

// Runs a and b, b possibly in parallel on p; allocation-free; returns both results.
template <class A, class B>
join_in_result_t<A, B> join_in(pool_core& p, A&& a, B&& b) {
    return join_plain<true>(p, a, b);
}

// Returns once done() holds; meanwhile runs other tasks (p's, when called outside every pool).
template <class Predicate>
void reschedule_in(pool_core& p, Predicate&& done) {
    check_callable(done);
    if (done())
        return;
    // Inline fast path for the seed pattern (fork a child, work, wait for it): on a worker the
    // task at the front of its deque is usually the child being waited for. Run it here and
    // re-check before entering the out-of-line loop (which also honours the injection period).
    // Only when the thread runs its own pool's task (not a foreign task it is helping with,
    // where the popped task would see the wrong current pool: the slow path handles that).
    if (worker* w = current_worker(); w != nullptr && w->m_pool == current_pool()) {
        if (task* t = w->m_deque.pop()) {
            run_counted(*w, t, [t]() noexcept { t->run(); });
            if (done())
                return;
        }
    }
    help_until(p, function_ref<bool()>(done));
}

} // namespace fj::detail
