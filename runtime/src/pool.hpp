// A pool: the workers, their queues and everything that runs them. fj::scheduler is a handle that
// owns one; the inline fork/join paths see only its public part (detail/pool_core.hpp). The worker
// loop (worker_loop.hpp), parking (parking.hpp), blocking waits (blocking_wait.cpp) and the
// lifecycle (pool.cpp) are functions over it.
#pragma once

#include "cpu_quota.hpp"
#include "event_count.hpp"
#include "injection_queue.hpp"
#include "worker_set.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include <forkjoin/detail/pool_core.hpp>
#include <forkjoin/options.hpp>
#include <forkjoin/stats.hpp>

namespace fj::detail {

struct parking_lot; // parking.cpp: the worker loop on fibers, park and resume
struct parking_lot_deleter {
    void operator()(parking_lot* lot) const noexcept;
};
struct trace_session; // trace.cpp: trace mode's per-worker buffers
struct trace_session_deleter {
    void operator()(trace_session* session) const noexcept;
};
class rescuer; // rescue.hpp: spare workers while tasks block
struct rescuer_deleter {
    void operator()(rescuer* r) const noexcept;
};
class cpu_budget;      // cpu_budget.hpp: the process's budget of running workers
struct thread_group;   // pool.cpp: the worker threads
struct profile_region; // <forkjoin/detail/profile_frame.hpp>

struct pool final : pool_core {
    pool(fj::scheduler& handle, const scheduler_options& options, std::uint64_t id);
    ~pool();

    bool is_closed() const noexcept { return m_injected.is_closed(); }

    scheduler_options m_options; // as given, with the defaults resolved
    worker_set m_workers;
    injection_queue<task> m_injected; // also holds the closed flag
    event_count m_sleep{m_sleepers};
    alignas(128) std::atomic<std::uint32_t> m_active{0}; // workers/helpers not asleep
    std::atomic<bool> m_stop{false};                     // set once: all work done after close
    std::atomic<std::uint64_t> m_outside_rng{0x9e3779b97f4a7c15ull};
    std::uint64_t m_generation = 0; // the process fork() generation it was created in (#fork)
    std::unique_ptr<thread_group> m_threads;
    std::unique_ptr<parking_lot, parking_lot_deleter> m_parking; // null when parking is off
    // Spare workers while tasks block (docs/design.md#rescue); null when max_spare_workers is 0.
    std::unique_ptr<rescuer, rescuer_deleter> m_rescue;
    // Observers (observe.hpp): trace mode's session, null unless tracing; the region every task
    // submitted to the pool is a root of, null unless it profiles its whole run.
    std::unique_ptr<trace_session, trace_session_deleter> m_trace;
    std::shared_ptr<profile_region> m_whole_run_profile;
    // The CPUs the pool's workers may run on (docs/design.md#crowded): the affinity mask's count
    // lowered to the cgroup quota read at start. A worker going idle re-reads the mask every
    // k_cpus_recheck (m_cpus_read_at, steady_clock ticks). relaxed, both: hints; a stale count
    // costs a wake-up or some parallelism until the next re-read, never a task.
    alignas(128) std::atomic<std::uint32_t> m_cpus{1};
    std::atomic<std::int64_t> m_cpus_read_at{0};
    cpu_limit m_cgroup_limit;
    // Tasks parked and not yet queued for resumption: pending work the pool must not stop under
    // (the termination invariant, docs/design.md#parking). seq_cst: read by the last worker to
    // go idle in the same single order as m_active.
    alignas(128) std::atomic<std::size_t> m_parked{0};
    // Threads outside the pool inside make_resumable(): shutdown waits for them to leave.
    std::atomic<std::uint32_t> m_wakers{0};
    // Whether the workers take places in the process's budget of running workers
    // (cpu_budget.hpp): share_cpu_budget, for a pool no larger than the budget (one sized beyond
    // the CPUs asks for more threads than CPUs on purpose: docs/design.md#crowded).
    bool m_shares_cpu_budget = false;
    cpu_budget* m_cpu_budget = nullptr; // the budget it joined (a fork() child makes a new one)
    std::mutex m_shutdown_mutex;
    bool m_joined = false; // guarded by m_shutdown_mutex
};

inline pool& pool_of(pool_core& p) noexcept {
    return static_cast<pool&>(p);
}
inline const pool& pool_of(const pool_core& p) noexcept {
    return static_cast<const pool&>(p);
}

// Lifecycle (pool.cpp, docs/design.md#shutdown).
// Builds a pool for `handle`, starts its workers and registers it for continuation routing.
// Throws std::invalid_argument for bad options, std::runtime_error if a thread cannot start.
pool* make_pool(fj::scheduler& handle, const scheduler_options& options);
// Finishes everything submitted, then joins the workers. Idempotent.
void shutdown(pool& p);
// Unregisters, shuts down and frees the pool.
void destroy_pool(pool* p) noexcept;

// Statistics snapshot (stats_report.cpp).
scheduler_stats snapshot(const pool& p);

} // namespace fj::detail
