// The inline fast paths of a pool: submit, fork, join and reschedule_until, as functions over its
// public part (pool_core.hpp). fj::scheduler's members and the free functions in async.hpp call
// these; the slow paths they fall back to are out of line in runtime/src.
//
// Observers (observe.hpp; the profiler measures forks and joins) cost one load of a global and a
// branch per operation while none exists: the observed paths are out of the inlined code
// (noinline), and come back to the plain ones.
#pragma once

#include "../future.hpp"
#include "callable_check.hpp"
#include "caller.hpp"
#include "current.hpp"
#include "future_state.hpp"
#include "join_task.hpp"
#include "observe.hpp"
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

// A fork or submit while observers exist: `start(body)` creates the task. A child the observers
// measure runs as a frame of its own, and its fork edge is left for its future's get().
template <class F, class Start>
[[gnu::noinline]] future<task_result_t<F>> start_observed(pool_core& p, bool is_submit, F&& fn,
                                                          Start&& start) {
    check_callable(fn); // before the observers record a child that will never exist
    std::shared_ptr<profile_edge> edge = on_child_created(p, is_submit);
    if (edge == nullptr)
        return start(std::forward<F>(fn));
    future<task_result_t<F>> f = start(profiled_body<std::decay_t<F>>(edge, std::forward<F>(fn)));
    on_child_started(future_access::state(f), std::move(edge));
    return f;
}

// submit without observers.
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
    if (observed()) [[unlikely]]
        return start_observed(p, true, std::forward<F>(fn), [&p](auto&& body) {
            return submit_plain(p, std::forward<decltype(body)>(body));
        });
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
    if (observed()) [[unlikely]]
        return start_observed(p, false, std::forward<F>(fn), [&p, w](auto&& body) {
            return fork_on(p, *w, std::forward<decltype(body)>(body));
        });
    return fork_on(p, *w, std::forward<F>(fn));
}

template <class A, class B>
using join_in_result_t = join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>>;

template <class A, class B>
join_in_result_t<A, B> join_plain(pool_core& p, A& a, B& b);

// A join called off p's workers: outside every pool, the calling thread runs it as one of p's
// threads (caller.hpp); otherwise (a task of another pool, or no caller's slot free) the whole
// join runs as one task of p, so both branches and everything they fork take the fast path, and
// the caller waits for it.
template <class A, class B>
[[gnu::noinline]] join_in_result_t<A, B> join_outside(pool_core& p, A& a, B& b) {
    caller_scope caller(p); // enters only from outside every pool
    if (caller.entered())
        return join_plain(p, a, b);
    return submit_to(p, [&] { return join_plain(p, a, b); }).get();
}

// join without observers. always_inline: join inlined whole into its caller before the observed
// path existed, and must still (its cost per join is the runtime's headline number); without the
// attribute GCC keeps this one instantiation, called from join_in and from its own outside path,
// out of line: one call and return more per join.
template <class A, class B>
[[gnu::always_inline]] inline join_in_result_t<A, B> join_plain(pool_core& p, A& a, B& b) {
    using Ra = std::invoke_result_t<A&>;
    using Rb = std::invoke_result_t<B&>;
    check_callable(a);
    check_callable(b);
    worker* w = own_worker(p);
    if (w == nullptr) [[unlikely]]
        return join_outside(p, a, b);
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

// A join while observers exist (noinline: join stays as small as it is without them). a
// continues the caller's frame; b is a measured child with its fork edge on this stack, joined
// when the join returns (or throws).
template <class A, class B>
[[gnu::noinline]] join_in_result_t<A, B> join_observed(pool_core& p, A& a, B& b) {
    profile_edge edge;
    if (!on_join_fork(edge))
        return join_plain(p, a, b);
    check_callable(b);
    struct join_edge_on_exit {
        const profile_edge& edge;
        ~join_edge_on_exit() { on_join_end(edge); }
    } joined{edge};
    auto measured_b = [&]() -> decltype(auto) {
        profile_scope scope(edge);
        return b(); // a branch takes no arguments: std::invoke would add nothing
    };
    return join_plain(p, a, measured_b);
}

// Runs a and b, b possibly in parallel on p; allocation-free; returns both results.
template <class A, class B>
join_in_result_t<A, B> join_in(pool_core& p, A&& a, B&& b) {
    if (observed()) [[unlikely]]
        return join_observed(p, a, b);
    return join_plain(p, a, b);
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
