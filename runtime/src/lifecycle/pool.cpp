// A pool's lifecycle: start-up, submission from outside, shutdown. Continuations are routed in
// continuation_routing.cpp, statistics gathered and printed in stats_report.cpp.
//
// Shutdown (docs/design/shutdown.md), in steps:
//   1. close the injection queue (a bit in its tail word): from now on a submit from outside the
//      pool throws fj::scheduler_closed; a submit ordered before the close is in the queue.
//      Tasks of this pool may still fork and submit (they are part of the work being finished);
//   2. wake every sleeping worker so each re-evaluates;
//   3. workers keep running until the last one awake finds the queue closed and every queue
//      empty (the termination invariant, state/pool.hpp); it sets m_stop and wakes the rest,
//      which exit;
//   4. join the threads.
// Nothing accepted is lost: a submit either got in before the close (and the workers cannot
// stop before its task ran) or threw.
#include "budget/cpu_budget.hpp"
#include "fibers/overflow_handler.hpp"
#include "lifecycle/lifecycle.hpp"
#include "lifecycle/pool_registry.hpp"
#include "lifecycle/process_fork.hpp"
#include "loop/worker_loop.hpp"
#include "observe/events.hpp"
#include "parking/parking.hpp"
#include "platform/cpus.hpp"
#include "platform/process_generation.hpp"
#include "rescue/rescue.hpp"
#include "sleep/sleep.hpp"
#include "state/steal_hint.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <thread>

#include <boost/thread/thread.hpp>

#include <forkjoin/errors.hpp>

namespace fj::detail {

struct thread_group {
    std::vector<boost::thread> threads;
};

namespace {

void validate(const scheduler_options& o) {
    if (o.workers > scheduler_options::max_workers)
        throw_invalid_argument(
            "fj::scheduler: " + std::to_string(o.workers) + " workers requested; the limit is " +
            std::to_string(scheduler_options::max_workers) + " (use 0 for one per available CPU)");
    if (o.worker_stack_size < (std::size_t{64} << 10))
        throw_invalid_argument("fj::scheduler: worker_stack_size " +
                               std::to_string(o.worker_stack_size) +
                               " is below the minimum of 65536 bytes");
    if (o.fiber_stack_size < (std::size_t{64} << 10))
        throw_invalid_argument("fj::scheduler: fiber_stack_size " +
                               std::to_string(o.fiber_stack_size) +
                               " is below the minimum of 65536 bytes (it is a reservation: "
                               "only touched pages cost memory, so keep it generous)");
    if (o.spin_before_sleep.count() < 0 ||
        o.spin_before_sleep > scheduler_options::max_spin_before_sleep)
        throw_invalid_argument(
            "fj::scheduler: spin_before_sleep must be between 0 and 100000 microseconds (100 ms), "
            "not " +
            std::to_string(o.spin_before_sleep.count()) +
            ": idle workers spin that long before they sleep or notice a shutdown");
    if (o.trace_events_per_worker < 1024)
        throw_invalid_argument(
            "fj::scheduler: trace_events_per_worker must be at least 1024, not " +
            std::to_string(o.trace_events_per_worker));
    if (o.initial_deque_capacity == 0 ||
        o.initial_deque_capacity > scheduler_options::max_initial_deque_capacity)
        throw_invalid_argument(
            "fj::scheduler: initial_deque_capacity must be between 1 and 2^20 (deques grow on "
            "demand), not " +
            std::to_string(o.initial_deque_capacity));
    if (o.max_spare_workers && *o.max_spare_workers > scheduler_options::max_spare_workers_limit)
        throw_invalid_argument("fj::scheduler: max_spare_workers must be between 0 (no spare "
                               "threads) and " +
                               std::to_string(scheduler_options::max_spare_workers_limit) +
                               ", not " + std::to_string(*o.max_spare_workers));
    if (o.max_callers > scheduler_options::max_callers_limit)
        throw_invalid_argument("fj::scheduler: max_callers must be between 0 (every call from "
                               "outside the pool queues its work and waits) and " +
                               std::to_string(scheduler_options::max_callers_limit) + ", not " +
                               std::to_string(o.max_callers));
}

// The options with the defaults resolved (the worker count, the spares' cap, the trace file,
// whole-run profiling).
scheduler_options resolved(const scheduler_options& options) {
    validate(options);
    scheduler_options o = options;
    o.workers = options.workers != 0 ? options.workers : default_worker_count();
    if (!o.max_spare_workers)
        o.max_spare_workers = scheduler_options::scaled_max_spare_workers(o.workers);
    resolve_observer_options(o);
    return o;
}

void start_workers(pool& p);

} // namespace

pool::pool(fj::scheduler& handle, const scheduler_options& options, std::uint64_t id)
    : pool_core(handle, id, options.workers, asymmetric_barrier_available(),
                push_notice_fields(options.workers)),
      m_options(options),
      m_workers(options.workers + *options.max_spare_workers + options.max_callers),
      m_callers(options.max_callers), m_generation(process_generation()) {
    for (std::size_t i = 0; i < m_worker_count; ++i)
        m_workers.add([this](std::size_t index) {
            return std::make_unique<worker>(this, index, m_options.initial_deque_capacity);
        });
    m_active.store(static_cast<std::uint32_t>(m_worker_count), std::memory_order_relaxed);
    m_cgroup_limit = process_cgroup_cpu_limit();
    m_cpus.store(static_cast<std::uint32_t>(usable_cpus(affinity_cpu_count(), m_cgroup_limit)),
                 std::memory_order_relaxed);
    m_cpus_read_at.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                         std::memory_order_relaxed);
    // Per-slot state for every slot: spares run tasks that park like any worker's, and spare and
    // caller slots share one index space (a spare made after a caller's slot is numbered past
    // workers + max_spare_workers). A caller's entry stays unused: callers do not park.
    m_parking = make_parking_lot(m_options, m_workers.capacity(), &run_worker_loop);
    if (*m_options.max_spare_workers != 0) {
        m_rescue.reset(new rescuer(*this, *m_options.max_spare_workers));
        m_spare_hooks = m_rescue.get();
    }
    start_observing(*this); // nothing after it throws
    m_shares_cpu_budget =
        m_options.share_cpu_budget && m_worker_count <= cpu_budget::instance().limit();
    if (m_shares_cpu_budget) {
        m_cpu_budget = &cpu_budget::instance();
        m_cpu_budget->add_workers(m_worker_count); // before a worker can look at it
    }
}

pool::~pool() {
    // Not in the child of a fork(): the budget it joined stayed in the parent (its sleepers and
    // mutex with it), and the child has its own.
    if (m_cpu_budget != nullptr && m_generation == process_generation())
        m_cpu_budget->remove_workers(m_worker_count);
    abandon_observing(*this); // a pool that stopped has ended its observers already
}

pool* make_pool(fj::scheduler& handle, const scheduler_options& options) {
    const scheduler_options o = resolved(options);
    install_fork_handlers();
    auto p = std::make_unique<pool>(handle, o, next_pool_id());
    start_workers(*p);
    try {
        if (p->m_rescue != nullptr)
            p->m_rescue->start();
        register_pool(*p);
    } catch (...) { // no destructor will run, so undo the start here
        shutdown(*p);
        throw;
    }
    return p.release();
}

namespace {

void start_workers(pool& p) {
    install_overflow_handler(); // names a task's stack overflow (overflow_handler.hpp)
    p.m_threads = std::make_unique<thread_group>();
    const std::size_t n = p.m_worker_count;
    p.m_threads->threads.reserve(n);
    const std::vector<int> cpus = p.m_options.pin_workers ? affinity_cpus() : std::vector<int>{};
    for (std::size_t i = 0; i < n; ++i) {
        boost::thread::attributes attributes;
        attributes.set_stack_size(prepare_thread_stack(p, i)); // small where tasks run on fibers
        // const&: with a non-const lvalue, boost::thread's variadic (callable, args...)
        // constructor is the better match and would take the attributes for the callable.
        const boost::thread::attributes& attrs = attributes;
        try {
            fault_injection::check(fault_injection::site::thread_start);
            p.m_threads->threads.emplace_back(attrs, [&p, i] { worker_main(p, i); });
        } catch (const std::exception& e) {
            give_back_first_loop_stack(p, i);
            // Undo: the started workers count as active; the rest never will.
            p.m_active.fetch_sub(static_cast<std::uint32_t>(n - i), std::memory_order_seq_cst);
            p.m_injected.close();
            wake_all(p);
            for (auto& t : p.m_threads->threads)
                t.join();
            p.m_joined = true;
            throw std::runtime_error("fj::scheduler: could not start worker thread " +
                                     std::to_string(i + 1) + " of " + std::to_string(n) + ": " +
                                     e.what());
        }
        if (!cpus.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[i % cpus.size()], &set);
            // Best effort: pinning is an optimisation, and the mask may have changed meanwhile.
            (void)pthread_setaffinity_np(p.m_threads->threads.back().native_handle(), sizeof(set),
                                         &set);
        }
    }
}

} // namespace

void shutdown(pool& p) {
    std::lock_guard lock(p.m_shutdown_mutex);
    if (p.m_joined)
        return;
    if (p.m_generation != process_generation()) {
        // In the child of a fork(): the workers stayed in the parent. Joining (or detaching) their
        // handles here would touch threads that do not exist, so the handles are abandoned.
        (void)p.m_threads.release();
        (void)p.m_rescue.release(); // its threads too, and its mutex may be held by one of them
        p.m_injected.close();
        p.m_joined = true;
        return;
    }
    p.m_injected.close(); // seq_cst RMW on the tail word: ordered with every push
    wake_all(p);
    if (p.m_cpu_budget != nullptr) // workers waiting for a place drain the pool without one
        p.m_cpu_budget->wake_sleepers();
    for (auto& t : p.m_threads->threads)
        t.join();
    // After the workers: the pool has stopped, so no spare starts and every spare ends.
    if (p.m_rescue != nullptr)
        p.m_rescue->stop();
    // A thread outside the pool that queued a parked task's record, or a coroutine moving here,
    // may still be notifying. acquire: pairs with the release decrement in make_resumable() and
    // inject_handing_over(), their last touch.
    while (p.m_wakers.load(std::memory_order_acquire) != 0)
        std::this_thread::yield();
    stop_observing(p); // the joins ordered every worker's last event and frame's end before this
    p.m_joined = true;
}

void destroy_pool(pool* p) noexcept {
    // First: from now on then() on a ready future of this pool continues on the current
    // scheduler instead (it would be refused after the close anyway).
    unregister_pool(p->m_id);
    shutdown(*p);
    delete p;
}

// --- Submission ----------------------------------------------------------------------------------

void inject(pool_core& core, task* t) {
    pool& p = pool_of(core);
    refuse_in_forked_child(p);
    // Tasks of this pool (on its workers, or helping threads running one) may still submit while
    // it drains: they are counted active, so the pool cannot stop before their submissions run.
    const bool from_own_task = current_pool() == &p;
    if (p.m_injected.push(t, from_own_task) == decltype(p.m_injected)::push_result::closed)
        throw_scheduler_closed();
    wake_for_work(p, pusher::other); // after the seq_cst CAS that published t
    if (p.m_rescue != nullptr)
        p.m_rescue->on_inject(); // a monitor backing off looks now: docs/design/rescue.md
}

void inject_handing_over(pool_core& core, task* t) {
    pool& p = pool_of(core);
    // relaxed: the pool cannot stop before t is queued and run, and the queue's seq_cst push
    // orders this increment before everything that follows t's pop, the destruction included.
    p.m_wakers.fetch_add(1, std::memory_order_relaxed);
    try {
        inject(core, t);
    } catch (...) {
        p.m_wakers.fetch_sub(1, std::memory_order_release);
        throw;
    }
    // release: pairs with the destructor's acquire load; our last touch of p.
    p.m_wakers.fetch_sub(1, std::memory_order_release);
}

void rescuer_deleter::operator()(rescuer* r) const noexcept {
    delete r;
}

} // namespace fj::detail
