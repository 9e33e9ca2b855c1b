// Scheduler lifecycle: start-up, submission, shutdown. Continuations are routed in
// continuation_routing.cpp, statistics gathered and printed in stats_report.cpp.
//
// Shutdown (docs/design.md#shutdown), in steps:
//   1. close the injection queue (a bit in its tail word): from now on a submit from outside the
//      pool throws fj::scheduler_closed; a submit ordered before the close is in the queue.
//      Tasks of this pool may still fork and submit (they are part of the work being finished);
//   2. wake every sleeping worker so each re-evaluates;
//   3. workers keep running until the last one awake finds the queue closed and every queue
//      empty (the termination invariant in worker_loop.cpp); it sets m_stop and wakes the rest,
//      which exit;
//   4. join the threads.
// Nothing accepted is lost: a submit either got in before the close (and the workers cannot
// stop before its task ran) or threw.
#include "overflow_handler.hpp"
#include "parking.hpp"
#include "scheduler_registry.hpp"
#include "system.hpp"
#include "trace.hpp"

#include <cstdio>
#include <exception>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <thread>

#include <boost/thread/thread.hpp>

#include <forkjoin/profile.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj {

struct scheduler::thread_group {
    std::vector<boost::thread> threads;
};

namespace {

scheduler_options with_workers(std::size_t workers) {
    scheduler_options o;
    o.workers = workers;
    return o;
}

void validate(const scheduler_options& o) {
    if (o.workers > scheduler_options::max_workers)
        detail::throw_invalid_argument(
            "fj::scheduler: " + std::to_string(o.workers) + " workers requested; the limit is " +
            std::to_string(scheduler_options::max_workers) + " (use 0 for one per available CPU)");
    if (o.worker_stack_size < (std::size_t{64} << 10))
        detail::throw_invalid_argument("fj::scheduler: worker_stack_size " +
                                       std::to_string(o.worker_stack_size) +
                                       " is below the minimum of 65536 bytes");
    if (o.fiber_stack_size < (std::size_t{64} << 10))
        detail::throw_invalid_argument("fj::scheduler: fiber_stack_size " +
                                       std::to_string(o.fiber_stack_size) +
                                       " is below the minimum of 65536 bytes (it is a reservation: "
                                       "only touched pages cost memory, so keep it generous)");
    if (o.spin_before_sleep.count() < 0 ||
        o.spin_before_sleep > scheduler_options::max_spin_before_sleep)
        detail::throw_invalid_argument(
            "fj::scheduler: spin_before_sleep must be between 0 and 100000 microseconds (100 ms), "
            "not " +
            std::to_string(o.spin_before_sleep.count()) +
            ": idle workers spin that long before they sleep or notice a shutdown");
    if (o.trace_events_per_worker < 1024)
        detail::throw_invalid_argument(
            "fj::scheduler: trace_events_per_worker must be at least 1024, not " +
            std::to_string(o.trace_events_per_worker));
    if (o.initial_deque_capacity == 0 ||
        o.initial_deque_capacity > scheduler_options::max_initial_deque_capacity)
        detail::throw_invalid_argument(
            "fj::scheduler: initial_deque_capacity must be between 1 and 2^20 (deques grow on "
            "demand), not " +
            std::to_string(o.initial_deque_capacity));
}

} // namespace

scheduler::scheduler() : scheduler(scheduler_options{}) {}

scheduler::scheduler(std::size_t workers) : scheduler(with_workers(workers)) {}

scheduler::scheduler(const scheduler_options& options) : m_options(options) {
    validate(options);
    detail::install_fork_handlers();
    m_generation = detail::process_generation();
    m_id = detail::next_scheduler_id();
    m_worker_count = options.workers != 0 ? options.workers : detail::default_worker_count();
    m_options.workers = m_worker_count;
    m_workers.reserve(m_worker_count);
    for (std::size_t i = 0; i < m_worker_count; ++i)
        m_workers.push_back(
            std::make_unique<detail::worker>(this, i, m_options.initial_deque_capacity));
    m_active.store(static_cast<std::uint32_t>(m_worker_count), std::memory_order_relaxed);
    m_asymmetric_barrier = detail::asymmetric_barrier_available();
    m_parking = detail::make_parking_lot(m_options, m_worker_count);
    m_options.trace_file = detail::trace_file_for(m_options);
    m_trace = detail::start_trace(m_options.trace_file, m_options.trace_events_per_worker, m_id,
                                  m_workers);
    m_options.profile_whole_run = detail::profile_whole_run(m_options.profile_whole_run);
    if (m_options.profile_whole_run)
        m_profile = std::make_shared<detail::profile_region>();
    start_workers();
    try {
        detail::register_scheduler(m_id, this);
    } catch (...) { // std::bad_alloc: no destructor will run, so undo the start here
        shutdown();
        throw;
    }
}

void scheduler::start_workers() {
    detail::install_overflow_handler(); // names a task's stack overflow (overflow_handler.hpp)
    m_threads = std::make_unique<thread_group>();
    m_threads->threads.reserve(m_worker_count);
    boost::thread::attributes attributes;
    attributes.set_stack_size(m_options.worker_stack_size);
    const boost::thread::attributes& attrs = attributes; // const&: see fibers-study.md §1
    const std::vector<int> cpus =
        m_options.pin_workers ? detail::affinity_cpus() : std::vector<int>{};
    for (std::size_t i = 0; i < m_worker_count; ++i) {
        try {
            detail::fault_injection::check(detail::fault_injection::site::thread_start);
            m_threads->threads.emplace_back(attrs, [this, i] { worker_main(i); });
        } catch (const std::exception& e) {
            // Undo: the started workers count as active; the rest never will.
            m_active.fetch_sub(static_cast<std::uint32_t>(m_worker_count - i),
                               std::memory_order_seq_cst);
            m_injected.close();
            m_sleep.notify_all();
            for (auto& t : m_threads->threads)
                t.join();
            m_joined = true;
            throw std::runtime_error("fj::scheduler: could not start worker thread " +
                                     std::to_string(i + 1) + " of " +
                                     std::to_string(m_worker_count) + ": " + e.what());
        }
        if (!cpus.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[i % cpus.size()], &set);
            // Best effort: pinning is an optimisation, and the mask may have changed meanwhile.
            (void)pthread_setaffinity_np(m_threads->threads.back().native_handle(), sizeof(set),
                                         &set);
        }
    }
}

scheduler::~scheduler() {
    if (on_worker_thread() || detail::current_scheduler_or_null() == this) {
        std::fputs("fj::scheduler destroyed from one of its own tasks: it cannot wait for itself. "
                   "Destroy it from outside the pool.\n",
                   stderr);
        std::terminate();
    }
    // First: from now on then() on a ready future of this pool continues on the current
    // scheduler instead (it would be refused after the close anyway).
    detail::unregister_scheduler(m_id);
    shutdown();
}

void scheduler::shutdown() {
    if (on_worker_thread() || detail::current_scheduler_or_null() == this)
        detail::throw_logic_error(
            "fj::scheduler::shutdown() called from one of the scheduler's own tasks: it would wait "
            "for itself to finish. Call shutdown() from outside the pool.");
    std::lock_guard lock(m_shutdown_mutex);
    if (m_joined)
        return;
    if (m_generation != detail::process_generation()) {
        // In the child of a fork(): the workers stayed in the parent. Joining (or detaching) their
        // handles here would touch threads that do not exist, so the handles are abandoned.
        (void)m_threads.release();
        m_injected.close();
        m_joined = true;
        return;
    }
    m_injected.close(); // seq_cst RMW on the tail word: ordered with every push
    m_sleep.notify_all();
    for (auto& t : m_threads->threads)
        t.join();
    // A thread outside the pool that queued a parked task's record may still be notifying.
    // acquire: pairs with the release decrement in make_resumable(), its last touch.
    while (m_wakers.load(std::memory_order_acquire) != 0)
        std::this_thread::yield();
    if (m_trace != nullptr)
        detail::finish_trace(*m_trace); // the joins ordered every worker's last event before this
    if (m_profile != nullptr)           // the joins ordered every frame's end before this
        detail::print_whole_run_profile(*m_profile, m_id, m_worker_count);
    m_joined = true;
}

// --- Submission ----------------------------------------------------------------------------------

void scheduler::inject(detail::task* t) {
    if (m_generation != detail::process_generation()) [[unlikely]]
        detail::throw_logic_error(
            "fj::scheduler: used in the child of a fork(), but it was created before the fork and "
            "its worker threads exist only in the parent. Create a new scheduler in the child "
            "(fj::default_scheduler() and fj::async do this by themselves)");
    // Tasks of this pool (on its workers, or helping threads running one) may still submit while
    // it drains: they are counted active, so the pool cannot stop before their submissions run.
    const bool from_own_task = detail::current_scheduler_or_null() == this;
    if (m_injected.push(t, from_own_task) == decltype(m_injected)::push_result::closed)
        detail::throw_scheduler_closed();
    m_sleep.notify_one(); // after the seq_cst CAS that published t: docs/design.md#sleep
}

} // namespace fj
