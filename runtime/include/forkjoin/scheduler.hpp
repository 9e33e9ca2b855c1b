// fj::scheduler: a pool of worker threads, each with its own work-stealing deque, plus one global
// FIFO injection queue for work arriving from outside the pool.
//
//   fork(f)             on one of this pool's workers: push f to the front of that worker's deque
//                       (thieves take from the back); elsewhere: the same as submit(f).
//   submit(f)           from any thread: append f to the injection queue (FIFO).
//   join(a, b)          run a and b, b possibly in parallel; allocation-free; returns both results.
//   reschedule_until(p) return once p() holds; meanwhile run other tasks (help while waiting).
//   shutdown()          finish everything submitted, then join the workers. Later submits from
//                       outside throw fj::scheduler_closed. The destructor calls it.
//
// Design, invariants and protocols: docs/design.md.
#pragma once

#include "detail/asymmetric_barrier.hpp"
#include "detail/callable_check.hpp"
#include "detail/current.hpp"
#include "detail/event_count.hpp"
#include "detail/function_ref.hpp"
#include "detail/future_state.hpp"
#include "detail/injection_queue.hpp"
#include "detail/join_task.hpp"
#include "detail/profile_frame.hpp"
#include "detail/task.hpp"
#include "detail/worker.hpp"
#include "future.hpp"
#include "options.hpp"
#include "stats.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

namespace fj::detail {
struct parking_lot;
struct fiber_runtime; // parking.cpp: the worker loop on fibers, park and resume
struct parking_lot_deleter {
    void operator()(parking_lot* lot) const noexcept; // parking.cpp, where the type is complete
};
struct trace_session; // trace.cpp: trace mode's per-worker buffers
struct trace_session_deleter {
    void operator()(trace_session* session) const noexcept;
};
} // namespace fj::detail

namespace fj {

class scheduler {
public:
    // Default options: FJ_WORKERS, else one worker per CPU in the affinity mask.
    scheduler();
    // Exactly `workers` workers (0 = the default count).
    explicit scheduler(std::size_t workers);
    explicit scheduler(const scheduler_options& options);
    ~scheduler();

    scheduler(const scheduler&) = delete;
    scheduler& operator=(const scheduler&) = delete;

    std::size_t worker_count() const noexcept { return m_worker_count; }
    const scheduler_options& options() const noexcept { return m_options; }

    template <class F>
    future<detail::task_result_t<F>> submit(F&& fn);

    template <class F>
    future<detail::task_result_t<F>> fork(F&& fn);

    template <class A, class B>
    detail::join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>> join(A&& a, B&& b);

    template <class Predicate>
    void reschedule_until(Predicate&& done);

    // Runs one pending task of this scheduler on the calling thread, if there is one.
    bool try_run_one();

    void shutdown();
    bool is_closed() const noexcept { return m_injected.is_closed(); }

    // True if the calling thread is one of this scheduler's workers.
    bool on_worker_thread() const noexcept { return own_worker() != nullptr; }

    scheduler_stats stats() const;

private:
    friend void detail::wait_plain(detail::completion&);
    friend bool detail::wait_until_slow(detail::completion&, std::chrono::steady_clock::time_point);
    friend void detail::schedule_continuation(detail::task*, std::uint64_t&) noexcept;
    friend void detail::start_continuation(detail::task*, std::uint64_t, std::uint64_t&);
    friend std::uint64_t detail::current_scheduler_id() noexcept;
    friend struct detail::fiber_runtime;
    struct thread_group;

    // The calling thread's worker if it belongs to this scheduler.
    detail::worker* own_worker() const noexcept {
        detail::worker* w = detail::current_worker();
        return (w != nullptr && w->m_owner == this) ? w : nullptr;
    }

    // The pusher's half of the sleep protocol's Dekker pair (docs/design.md#sleep), for every
    // store that makes work visible to the pool's workers: `publish(seq_cst)` makes the store,
    // then the sleeper count is read and a sleeper woken if one sleeps. With the asymmetric
    // barrier the sleeper pays for the StoreLoad fence (publish(false): a release store and a
    // compiler barrier), else the store is seq_cst (publish(true)).
    template <class Publish>
    void publish_work(Publish&& publish) {
        if (m_asymmetric_barrier) [[likely]] {
            publish(false);
            detail::light_barrier();
        } else {
            publish(true);
        }
        if (m_sleep.has_waiters()) [[unlikely]]
            m_sleep.notify_one();
    }

    // Pushes t to the calling worker's deque and wakes a sleeper if one sleeps. Throws only if
    // the deque cannot grow, and then before t is published.
    void push_local(detail::worker& w, detail::task* t) {
        publish_work([&](bool seq_cst) {
            if (seq_cst)
                w.m_deque.push_seq_cst(t);
            else
                w.m_deque.push(t);
        });
    }

    // The same operations without the profiler's hooks (what they run outside fj::profile).
    template <class F>
    future<detail::task_result_t<F>> submit_plain(F&& fn);
    template <class F>
    future<detail::task_result_t<F>> fork_on(detail::worker& w, F&& fn);
    template <bool Measured, class A, class B>
    detail::join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>> join_plain(A&& a,
                                                                                         B&& b);
    template <class A, class B>
    detail::join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>> join_profiled(A& a,
                                                                                            B& b);
    // Inside an fj::profile region (docs/tracing.md#profiler): the child is measured as a frame
    // of its own, and its fork edge is registered under its future's state for get().
    template <class F, class Start>
    future<detail::task_result_t<F>> start_profiled(F&& fn, Start&& start);

    template <class F>
    static auto make_task(F&& fn) {
        return detail::fork_task<std::decay_t<F>, detail::task_result_t<F>>::make(
            std::forward<F>(fn));
    }

    // Out of line (runtime/src): the cold and slow paths.
    void inject(detail::task* t);
    void help_until(detail::function_ref<bool()> done);
    // On one of this pool's workers: run its tasks until done() holds.
    void help_on_worker(detail::function_ref<bool()> done);
    // On a worker: runs the tasks at the front of the calling worker's own deque (the ones its
    // running frames forked, newest first) until done() holds or the deque is empty. The
    // awaited child is usually there ("wait inlining"); nothing stolen or injected runs on top.
    bool run_own_until(detail::function_ref<bool()> done);
    void help_outside(detail::function_ref<bool()> done);
    bool pop_until(detail::task* first_popped, detail::task* target);
    bool run_one_outside();
    void run_task(detail::worker& w, detail::task* t) noexcept;
    // at_top_level: the caller is a worker's loop with nothing on its stack, so it may take a
    // resumable parked task from a worker's m_resumable slot (and resume it by ending).
    detail::task* find_work(detail::worker& w, bool at_top_level);
    detail::task* find_work_or_sleep(detail::worker& w);
    detail::task* steal_from_others(detail::worker* self, std::uint64_t random, bool at_top_level);
    bool work_visible() const;
    void worker_main(std::size_t index);
    void start_workers();

    scheduler_options m_options;
    std::size_t m_worker_count = 0;
    std::vector<std::unique_ptr<detail::worker>> m_workers;
    detail::injection_queue<detail::task> m_injected; // also holds the closed flag
    bool m_asymmetric_barrier = false; // set once at construction: see asymmetric_barrier.hpp
    alignas(128) detail::event_count m_sleep;
    alignas(128) std::atomic<std::uint32_t> m_active{0}; // workers/helpers not asleep
    std::atomic<bool> m_stop{false};                     // set once: all work done after close
    std::atomic<std::uint64_t> m_outside_rng{0x9e3779b97f4a7c15ull};
    std::uint64_t m_generation = 0; // the process fork() generation it was created in (#fork)
    std::uint64_t m_id = 0;         // unique in the process, never reused: a future state's m_home
    std::unique_ptr<thread_group> m_threads;
    std::unique_ptr<detail::parking_lot, detail::parking_lot_deleter>
        m_parking; // null when parking is off
    std::unique_ptr<detail::trace_session, detail::trace_session_deleter>
        m_trace; // null unless tracing (docs/tracing.md)
    // Whole-run profiling: the region every outside submission's task is measured in, else null.
    std::shared_ptr<detail::profile_region> m_profile;
    // Tasks parked and not yet queued for resumption: pending work the pool must not stop under
    // (the termination invariant, docs/design.md#parking). seq_cst: read by the last worker to
    // go idle in the same single order as m_active.
    alignas(128) std::atomic<std::size_t> m_parked{0};
    // Threads outside the pool inside make_resumable(): the destructor waits for them to leave.
    std::atomic<std::uint32_t> m_wakers{0};
    std::mutex m_shutdown_mutex;
    bool m_joined = false; // guarded by m_shutdown_mutex
};

template <class F, class Start>
[[gnu::noinline]] future<detail::task_result_t<F>> scheduler::start_profiled(F&& fn,
                                                                             Start&& start) {
    if (detail::context().profile == nullptr) // a region exists, but not around this task
        return start(std::forward<F>(fn));
    detail::check_callable(fn);
    std::shared_ptr<detail::profile_edge> edge = detail::profile_fork_shared();
    future<detail::task_result_t<F>> f =
        start(detail::profiled_body<std::decay_t<F>>(edge, std::forward<F>(fn)));
    detail::profile_register(f.m_state, std::move(edge));
    return f;
}

template <class F>
future<detail::task_result_t<F>> scheduler::submit(F&& fn) {
    if (detail::profile_regions_exist()) [[unlikely]] {
        if (detail::context().profile != nullptr)
            // this-> spelled out: clang 14 -Wunused-lambda-capture misses an implicit one here.
            return start_profiled(std::forward<F>(fn), [this](auto&& body) {
                return this->submit_plain(std::forward<decltype(body)>(body));
            });
    }
    if (m_profile != nullptr) [[unlikely]] { // whole-run profiling: a root of the run's region
        detail::check_callable(fn);
        auto edge = std::make_shared<detail::profile_edge>();
        edge->region = m_profile;
        return submit_plain(detail::profiled_body<std::decay_t<F>>(edge, std::forward<F>(fn)));
    }
    return submit_plain(std::forward<F>(fn));
}

template <class F>
future<detail::task_result_t<F>> scheduler::submit_plain(F&& fn) {
    detail::check_callable(fn);
    auto* t = make_task(std::forward<F>(fn));
    t->m_home = m_id;
    try {
        inject(t);
    } catch (...) {
        t->discard(); // never queued: nobody else knows it
        throw;
    }
    return future<detail::task_result_t<F>>(t);
}

template <class F>
future<detail::task_result_t<F>> scheduler::fork(F&& fn) {
    detail::worker* w = own_worker();
    if (w == nullptr)
        return submit(std::forward<F>(fn));
    // One load of a global unless a profiler region exists (docs/tracing.md#profiler).
    if (detail::profile_regions_exist()) [[unlikely]]
        return start_profiled(std::forward<F>(fn), [this, w](auto&& body) {
            return this->fork_on(*w, std::forward<decltype(body)>(body)); // this->: see submit()
        });
    return fork_on(*w, std::forward<F>(fn));
}

// always_inline: fork() inlined whole into its caller before the profiler's dispatch existed,
// and must still (its cost per fork is the runtime's headline number).
template <class F>
[[gnu::always_inline]] inline future<detail::task_result_t<F>>
scheduler::fork_on(detail::worker& worker, F&& fn) {
    detail::worker* w = &worker;
    detail::check_callable(fn);
    auto* t = make_task(std::forward<F>(fn));
    t->m_home = m_id;
    try {
        push_local(*w, t);
    } catch (...) { // the deque could not grow
        t->discard();
        throw;
    }
    w->m_stats.forks.bump();
    return future<detail::task_result_t<F>>(t);
}

template <class A, class B>
detail::join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>> scheduler::join(A&& a,
                                                                                          B&& b) {
    return join_plain<true>(a, b);
}

// Out of the inlined fast path (noinline): join() stays as small as it was without the profiler.
template <class A, class B>
[[gnu::noinline]] detail::join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>>
scheduler::join_profiled(A& a, B& b) {
    // a continues the caller's frame; b is a child frame with a fork edge on this stack, joined
    // when the join returns (or throws).
    if (detail::context().profile == nullptr) // a region exists, but not around this task
        return join_plain<false>(a, b);
    detail::check_callable(b);
    detail::profile_edge edge;
    detail::profile_fork(edge);
    struct join_edge_on_exit {
        const detail::profile_edge& edge;
        ~join_edge_on_exit() { detail::profile_join(edge); }
    } joined{edge};
    auto measured_b = [&]() -> decltype(auto) {
        detail::profile_scope scope(edge);
        return std::invoke(b);
    };
    return join_plain<false>(a, measured_b);
}

template <bool Measured, class A, class B>
detail::join_result_t<std::invoke_result_t<A&>, std::invoke_result_t<B&>>
scheduler::join_plain(A&& a, B&& b) {
    // One load of a global unless a profiler region exists (docs/tracing.md#profiler); the
    // measured join comes back here with Measured = false.
    if constexpr (Measured) {
        if (detail::profile_regions_exist()) [[unlikely]]
            return join_profiled(a, b);
    }
    using Ra = std::invoke_result_t<A&>;
    using Rb = std::invoke_result_t<B&>;
    detail::check_callable(a);
    detail::check_callable(b);
    detail::worker* w = own_worker();
    if (w == nullptr) {
        // Not on this pool: run the whole join as one task there, so both branches and everything
        // they fork take the fast path, and wait for it.
        return submit([&] { return join_plain<false>(a, b); }).get();
    }
    detail::join_task<std::remove_reference_t<B>> task_b(b);
    push_local(*w, &task_b);
    w->m_stats.forks.bump();
    detail::result_slot<Ra> result_a;
    result_a.run(a);
    // Pop task_b back by identity (the common case: inline, no call). Something else on top of
    // it is a task that a's code forked without joining: pop_until() runs those first.
    detail::task* popped = detail::current_worker()->m_deque.pop(); // re-read: a may have migrated
    if (popped == &task_b || (popped != nullptr && pop_until(popped, &task_b))) {
        // Not stolen: run it here unless a already failed (then b is cancelled before it starts).
        if (!result_a.failed())
            detail::run_counted(*detail::current_worker(), &task_b,
                                [&]() noexcept { task_b.run_inline(); });
    } else {
        // Stolen: the thief may still be running it, and it references this frame. Wait even if
        // a failed.
        detail::wait(task_b.m_done);
    }
    if (result_a.failed())
        std::rethrow_exception(result_a.error());
    if constexpr (std::is_void_v<Ra> && std::is_void_v<Rb>) {
        task_b.m_result.take();
    } else {
        return std::pair<detail::join_value_t<Ra>, detail::join_value_t<Rb>>{
            detail::take_join_value(result_a), detail::take_join_value(task_b.m_result)};
    }
}

template <class Predicate>
void scheduler::reschedule_until(Predicate&& done) {
    detail::check_callable(done);
    if (done())
        return;
    // Inline fast path for the seed pattern (fork a child, work, wait for it): on a worker the
    // task at the front of its deque is usually the child being waited for. Run it here and
    // re-check before entering the out-of-line loop (which also honours the injection period).
    // Only when the thread runs its own pool's task (not a foreign task it is helping with,
    // where the popped task would see the wrong current scheduler: the slow path handles that).
    if (detail::worker* w = detail::current_worker();
        w != nullptr && w->m_owner == detail::current_scheduler_or_null()) {
        if (detail::task* t = w->m_deque.pop()) {
            detail::run_counted(*w, t, [t]() noexcept { t->run(); });
            if (done())
                return;
        }
    }
    help_until(detail::function_ref<bool()>(done));
}

} // namespace fj
