// The rescue of a pool whose workers block (docs/design/rescue.md): spare workers, started when
// every thread working for the pool is asleep in the kernel inside a task while the pool has
// queued work (found by a monitor thread), or at once by fj::blocking(); retired when idle or no
// longer needed.
//
// A spare is an extra worker slot of the pool (index >= the pool's worker count) with its own
// deque, run by worker_main() like any worker; only its retirement differs (worker_loop.cpp).
// Slots of retired spares are reused, so the pool never has more than workers +
// max_spare_workers slots.
#pragma once

#include "rescue/monitor_arming.hpp"
#include "state/spare_hooks.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sys/types.h>
#include <vector>

#include <boost/thread/thread.hpp>

namespace fj::detail {

struct pool;

enum class spare_reason : std::uint32_t {
    rescue = 0,   // the monitor found every thread blocked with work queued
    blocking = 1, // fj::blocking() declared the caller's thread blocked
};

class rescuer final : public spare_hooks {
public:
    // For pool p, whose options ask for at most max_spares spares (> 0).
    rescuer(pool& p, std::size_t max_spares);
    rescuer(const rescuer&) = delete;
    rescuer& operator=(const rescuer&) = delete;
    ~rescuer(); // after stop() or abandon()

    // Starts the monitor thread. Throws std::runtime_error if it cannot start.
    void start();
    // After the pool's workers have stopped: ends the monitor and joins every spare thread.
    // (In the child of a process fork() the threads exist only in the parent: the pool leaks
    // its rescuer instead, as it does its worker threads' handles.)
    void stop() noexcept;

    // --- spare_hooks: called by the worker loop and the sleep protocol ---
    void on_thread_start(std::size_t index) noexcept override;
    // Cheap when the monitor already watches: one load.
    void on_all_awake() noexcept override {
        // seq_cst: the Dekker pair with the monitor's disarm (monitor_arming.hpp).
        if (m_arming.armed_wanted())
            arm();
    }
    // --- Called by the pool's lifecycle ---
    // Work was submitted from outside: while no thread of the pool is known to run, the monitor
    // looks now rather than up to a period later. One relaxed load otherwise.
    void on_inject() noexcept {
        if (m_all_stalled.load(std::memory_order_relaxed))
            on_inject_slow();
    }
    // A wait of the runtime's own that ends by itself (starting the process's timer thread):
    // meanwhile the monitor counts the thread as a runner, so the wait never passes for a block
    // however long the machine makes it (step 3).
    void on_own_wait(std::size_t index, bool begins) noexcept override {
        // relaxed: a hint the monitor reads at its next look, like `declared`.
        if (begins)
            m_slots[index].own_waits.fetch_add(1, std::memory_order_relaxed);
        else
            m_slots[index].own_waits.fetch_sub(1, std::memory_order_relaxed);
    }
    bool retire_requested(std::size_t index) const noexcept override {
        // relaxed: a hint read at task boundaries; a late read retires one task later.
        return m_slots[index].retire_requested.load(std::memory_order_relaxed);
    }
    // The spare serving slot `index` has left the pool (worker_loop.cpp has settled m_active);
    // its thread is about to end.
    void on_spare_retired(std::size_t index) noexcept;

    // --- fj::blocking() (blocking.cpp) ---
    static constexpr std::size_t k_none = ~std::size_t{0};
    // A spare started for one fj::blocking() call: its slot and which start of that slot it was
    // (slots are reused, and the call must not retire a later spare in the same slot).
    struct ticket {
        std::size_t index = k_none;
        std::uint64_t start = 0;
    };
    // The thread serving slot `index` is about to block: counts it blocked at once and, unless a
    // thread of the pool is idle, starts a spare.
    ticket begin_blocking(std::size_t index) noexcept;
    // ... and has returned: the spare started for it, if any, retires at its next task boundary.
    void end_blocking(std::size_t index, ticket spare) noexcept;

    // Statistics (stats_report.cpp).
    struct counts {
        std::uint64_t rescues = 0, blocking_handoffs = 0, retired = 0;
        std::uint32_t running = 0;
        std::uint64_t looks = 0, state_reads = 0;
    };
    counts snapshot() const noexcept;

private:
    // Per worker slot. Written by the threads serving the slot or by the monitor as marked.
    struct slot {
        std::atomic<pid_t> tid{0};               // the serving thread, 0 while none
        std::atomic<std::uint32_t> declared{0};  // fj::blocking scopes open on it
        std::atomic<std::uint32_t> own_waits{0}; // own_wait_scopes open on it
        std::atomic<bool> retire_requested{false};
        // A thread works for the slot (workers: always). Written under m_mutex; relaxed loads by
        // the monitor, which re-reads it every look (a stale value costs one look).
        std::atomic<bool> serving{false};
        // Spares started in this slot: written under m_mutex, read by the monitor (relaxed: it
        // only tells a new spare from the one it looked at before).
        std::atomic<std::uint64_t> starts{0};
        boost::thread thread; // spares only; guarded by m_mutex
        // The monitor's own (no other thread touches them): the start it last looked at, the
        // tasks_run count then, how many looks in a row found the thread asleep in the kernel
        // without having started a task, and when its kernel state last read running without
        // a task started since (the epoch of steady_clock: not since its last task).
        std::uint64_t seen_start = 0;
        std::uint64_t last_tasks = 0;
        std::uint32_t blocked_samples = 0;
        std::chrono::steady_clock::time_point running_read_at{};
    };

    // --- The monitor (monitor.cpp) ---
    void monitor_main() noexcept;
    void arm() noexcept;
    void on_inject_slow() noexcept;
    // When the next look should come: soon (work waits behind threads that make no progress),
    // calm (threads make progress, or spares run), or later (every thread blocked, nothing
    // queued: the period grows).
    enum class look { soon, calm, later };
    // What one look found among the serving threads (step 3). Every serving thread is counted
    // once in `serving` and at most once in `blocked` or `runners` (a thread asleep in the kernel
    // at only one look so far is in neither).
    struct census {
        // The pool's slots, read once per look: the counters' pass and step 5 cover the same.
        std::size_t slots = 0;
        std::size_t serving = 0, blocked = 0, runners = 0;
        bool any_idle = false; // some thread asleep on the pool's event count
        // Stalled threads found asleep in the kernel, but at fewer than k_blocked_looks reads
        // so far: the ones whose next read decides whether they are blocked.
        std::size_t suspects = 0;
    };
    // One look at the pool (steps 2-5).
    look sample();
    // Step 2: true if some worker is idle and the monitor is now disarmed until on_all_awake().
    bool disarm_if_some_idle() noexcept;
    // Spares alive now (under m_mutex).
    std::uint32_t running_spares() const noexcept;
    // Step 3, first pass: every serving slot's counters, no system call. The stalled threads are
    // left in m_stalled for the second pass.
    census read_counters() noexcept;
    // Step 3, second pass: the stalled threads, by their kernel state if read_states is set; a
    // thread read running less than k_running_reread ago without starting a task since is
    // counted running without a new read. Unless every state must be read afresh (`now` is the
    // epoch: spares alive), reading stops at the first thread known to run.
    void read_stalled_states(census& c, bool read_states,
                             std::chrono::steady_clock::time_point now) noexcept;
    // Step 5: asks `surplus` running spares among the first `slots` slots to retire.
    void request_retirements(std::size_t slots, std::size_t surplus) noexcept;
    // The pace of the looks after one that found c, with work queued or not and spares alive or
    // not.
    static look next_look(const census& c, bool work, bool need_runners) noexcept;
    // Starts a spare for `reason`; caller holds m_mutex. Returns its slot or k_none.
    std::size_t start_spare_locked(spare_reason reason) noexcept;
    // The thread that serves spare slot `index`.
    void spare_main(std::size_t index) noexcept;

    pool& m_pool;
    const std::size_t m_workers;        // the pool's worker count: slots [0, m_workers) are workers
    const std::size_t m_max_spares;     // the cap on spares alive at once
    std::unique_ptr<slot[]> m_slots;    // workers + max_spares, indexed like the pool's worker set
    std::vector<std::size_t> m_stalled; // the monitor's scratch list for one look

    mutable std::mutex m_mutex; // guards the spare bookkeeping and the monitor's sleep
    std::condition_variable m_cv;
    bool m_stopping = false;         // guarded by m_mutex
    bool m_monitor_started = false;  // guarded by m_mutex: start() waits for it
    bool m_nudged = false;           // guarded by m_mutex: look now (on_inject)
    std::vector<std::size_t> m_free; // retired spare slots to reuse; guarded by m_mutex
    std::uint32_t m_running = 0;     // spares alive; guarded by m_mutex
    std::uint64_t m_rescues = 0, m_handoffs = 0, m_retired = 0; // guarded by m_mutex
    // m_monitor_idle: true while the monitor waits to be armed (no sampling: some worker was
    // idle), and its Dekker pair with the pool's m_active (step 2).
    monitor_arming m_arming;
    // The last look found no thread running or idle (a hint for on_inject).
    std::atomic<bool> m_all_stalled{false};
    // Looks taken and kernel states read: written by the monitor only, read by snapshot()
    // (relaxed: statistics, any recent value will do).
    std::atomic<std::uint64_t> m_looks{0}, m_state_reads{0};
    boost::thread m_monitor;
};

} // namespace fj::detail
