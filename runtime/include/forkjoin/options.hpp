// Scheduler configuration: an options struct, not macros.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace fj {

struct scheduler_options {
    // Number of worker threads. 0 means the default, fj::default_worker_count(): the FJ_WORKERS
    // environment variable if set, else the number of CPUs in the process's affinity mask (as
    // `nproc` reports: it honours taskset and cpusets, unlike hardware_concurrency()), lowered to
    // the cgroup CPU quota rounded up (docker --cpus, Kubernetes CPU limits), at least 1.
    std::size_t workers = 0;

    // Native stack of a worker thread that runs tasks on it: with parking off, or where no fiber
    // stack could be had (a parking pool's threads run tasks on fiber_stack_size stacks and get
    // 256 KiB of their own). A reservation: only touched pages use memory, so it is generous by
    // default, because help-while-waiting nests tasks on the waiting worker's stack.
    std::size_t worker_stack_size = std::size_t{64} << 20;

    // Pin worker i to the i-th CPU of the affinity mask (wrapping around).
    bool pin_workers = false;

    // How long an idle worker searching for work spins before it sleeps (at most half of the awake
    // workers search; the others sleep at once): 0 to max_spin_before_sleep.
    std::chrono::microseconds spin_before_sleep{50};

    // Initial capacity of each worker's deque, 1 to max_initial_deque_capacity (it grows on
    // demand; a fork never fails for space).
    std::size_t initial_deque_capacity = 256;

    // Joins that must wait on a worker (future::get()/wait(), fj::join whose second branch was
    // stolen, reschedule_until) park the waiting task on a fiber and let the worker go on with
    // other work, instead of running unrelated tasks on top of the waiting frame
    // (docs/design/parking.md). false: help while waiting, where a task that waits for a
    // non-descendant's future (a shared_future, a promise) while its producer itself waits can
    // hang (docs/errors.md#not-detected). The FJ_PARKING environment variable (0 or 1) overrides
    // this for every scheduler.
    bool park_waiting_tasks = true;

    // Usable size of each fiber stack: a reservation (MAP_NORESERVE) of which only touched pages
    // cost memory, so a recursion that fits the main thread's 8 MiB stack also fits a task.
    std::size_t fiber_stack_size = std::size_t{64} << 20;

    // At most this many tasks parked at once per scheduler (each holds one stack, i.e. two kernel
    // memory maps of the process's vm.max_map_count); beyond it a join helps while waiting
    // instead. 0: three eighths of vm.max_map_count (24,573 with Linux's default).
    std::size_t max_parked_tasks = 0;

    // Trace mode (docs/tracing.md): when not empty, every worker records its tasks, steals,
    // injected tasks taken, sleeps and parks, and shutdown() writes them to this file as Chrome /
    // Perfetto trace-event JSON (one track per worker). Empty: the FJ_TRACE environment variable
    // names the file if set, else tracing is off (and costs one predictable branch per task).
    std::string trace_file;

    // Room for this many events per worker, allocated up front (16 bytes each; only what is used
    // becomes resident). Events beyond it are dropped and counted, and the file says so.
    std::size_t trace_events_per_worker = std::size_t{1} << 20;

    // Whole-run profiling (docs/tracing.md#profiler): every task submitted from outside the pool
    // is measured like an fj::profile region, and shutdown() prints the run's work, span and
    // parallelism on stderr. The FJ_PROFILE environment variable (0 or 1) overrides it.
    bool profile_whole_run = false;

    // Spare threads the pool may add while tasks block (docs/tutorial-async.md#blocking): when
    // every thread working for the pool is asleep in the kernel inside a task (a lock, a sleep,
    // a read) while the pool has queued work, it starts a spare worker so the queued work runs;
    // fj::blocking(f) starts one at once. Spares retire when they are no longer needed. At most
    // this many exist at once, 0 to max_spare_workers_limit; 0 turns the rescue off (a pool
    // whose workers all block then waits for one of them to return). Unset (the default):
    // scaled_max_spare_workers(workers), so a pool sized for a bigger machine may have more tasks
    // blocked at once. The scheduler's options() holds the value in force.
    std::optional<std::size_t> max_spare_workers;

    // One budget of running workers for the whole process (docs/design/cpu-budget.md), for
    // pools that opt in: while the pools that share it have more workers in all than
    // fj::running_worker_limit() (the CPUs the process may use), a worker runs only while it
    // holds one of that many places; the others stay asleep until a running one goes idle, as
    // oneTBB's arenas draw on one set of workers. A worker asleep in the kernel inside a task (a
    // lock, a read) keeps its place but does not hold up the others: one that has waited a
    // millisecond runs anyway when every holder is asleep in the kernel. Spare workers never
    // wait for a place. A pool of more workers than fj::running_worker_limit() asks for more
    // threads than CPUs on purpose (docs/design/crowded.md) and does not share.
    // Off by default: a task that waits for work of another sharing pool while every place is
    // held by running (not blocked) tasks waits until one of them returns.
    bool share_cpu_budget = false;

    // Threads outside the pool (main, any thread that is no worker of a pool) that may run a
    // blocking parallel call on their own thread at once (docs/design/callers.md): execute(),
    // join() and the algorithms called from outside run their root on the calling thread, which
    // works as one of the pool's threads until its call returns, with a deque of its own that the
    // workers steal from. Further callers queue their work and block, as every one does with 0,
    // and as every call does in a pool of one worker (which runs one thread at a time). Each
    // caller's slot is made the first time it is needed and kept; 0 to max_callers_limit.
    std::size_t max_callers = 64;

    static constexpr std::chrono::microseconds max_spin_before_sleep{100'000};
    static constexpr std::size_t max_spare_workers_limit = 4096;
    // The spares a pool of `workers` may run when max_spare_workers is unset: four per worker,
    // at least 256 (a small pool still rides out a burst of blocking tasks), at most the limit.
    static constexpr std::size_t scaled_max_spare_workers(std::size_t workers) noexcept {
        const std::size_t scaled =
            workers < max_spare_workers_limit / 4 ? 4 * workers : max_spare_workers_limit;
        return scaled < 256 ? 256 : scaled;
    }
    static constexpr std::size_t max_callers_limit = 4096;
    static constexpr std::size_t max_initial_deque_capacity = std::size_t{1} << 20;

    static constexpr std::size_t max_workers = 4096;
};

// The worker count a scheduler given workers = 0 (or default-constructed) would start with now,
// computed as described at scheduler_options::workers. Starts no thread and creates no scheduler;
// reads FJ_WORKERS, the affinity mask and the cgroup files afresh on each call. Throws
// std::invalid_argument for a malformed FJ_WORKERS, with the scheduler's message.
std::size_t default_worker_count();

// The most workers of all the pools that share the budget (scheduler_options::share_cpu_budget)
// that run at once: the CPUs in the process's affinity mask, lowered to its cgroup CPU quota, as
// read when the first pool started (oneTBB's one set of workers for all its arenas). Reading it
// starts nothing.
std::size_t running_worker_limit();

} // namespace fj
