// The rescue's monitor thread: its loop and its look at the pool (docs/design/rescue.md, steps
// 1-5, whose numbers the comments below cite). Spares and fj::blocking are in rescue.cpp.
#include "platform/thread_name.hpp"
#include "platform/thread_state.hpp"
#include "rescue/rescue.hpp"
#include "sleep/sleep.hpp"
#include "state/pool.hpp"

#include <algorithm>
#include <chrono>

namespace fj::detail {

namespace {

// How often the monitor looks while every worker is awake: every millisecond while work waits
// behind threads that make no progress; else from every 4 ms, more and more rarely, up to every
// 16 ms while threads make progress (each look wakes a thread on a busy machine), and up to every
// 64 ms while every thread is blocked with nothing queued. While no thread is known to run, a
// submission from outside nudges it to look at once (on_inject()).
constexpr std::chrono::microseconds k_alert_period{1000};
constexpr std::chrono::microseconds k_calm_period{4000};
constexpr std::chrono::microseconds k_longest_busy_period{16000};
constexpr std::chrono::microseconds k_longest_period{64000};
// A thread counts as blocked after this many reads of its state found it asleep in the kernel
// with no task started between them: a thread that takes a lock for a moment is rarely caught
// twice, and a rescue is only ever started when every thread is.
constexpr std::uint32_t k_blocked_looks = 2;
// A thread whose kernel state read running (a long task) is read again after this long at the
// earliest, unless it starts a task meanwhile; while it counts as running, a look reads no other
// thread (read_stalled_states). A long loop costs the monitor about one read per look whatever
// the pool's size, and a thread that blocks in the middle of a long task is found within 16 ms.
constexpr std::chrono::microseconds k_running_reread{16000};

} // namespace

void rescuer::arm() noexcept {
    // seq_cst exchange: only one waker notifies per disarm (step 2).
    if (m_arming.arm()) {
        std::lock_guard lock(m_mutex); // the monitor checks the flag under the mutex
        m_cv.notify_one();
    }
}

void rescuer::monitor_main() noexcept {
    name_this_thread("fj-monitor");
    std::unique_lock lock(m_mutex);
    m_monitor_started = true;
    m_cv.notify_all(); // start() waits on the same condition variable
    auto period = k_alert_period;
    while (!m_stopping) {
        if (m_arming.disarmed()) {
            // Step 2: disarmed; a worker that wakes and finds every worker awake arms us.
            m_cv.wait(lock, [this] { return m_stopping || !m_arming.disarmed(); });
            period = k_alert_period;
            continue;
        }
        m_cv.wait_for(lock, period, [this] { return m_stopping || m_nudged; });
        if (m_stopping)
            break;
        m_nudged = false;
        lock.unlock();
        const look next = sample();
        lock.lock();
        if (next == look::soon)
            period = k_alert_period;
        else
            period = std::min(std::max(period, k_calm_period / 2) * 2,
                              next == look::calm ? k_longest_busy_period : k_longest_period);
    }
}

void rescuer::on_inject_slow() noexcept {
    std::lock_guard lock(m_mutex);
    m_nudged = true;
    m_all_stalled.store(false, std::memory_order_relaxed); // one nudge per look
    m_cv.notify_one();
}

// --- One look (steps 2-5) ------------------------------------------------------------------------

rescuer::look rescuer::sample() {
    pool& p = m_pool;
    // relaxed, single writer: statistics for snapshot().
    m_looks.store(m_looks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (disarm_if_some_idle())
        return look::soon;
    if (p.m_stop.load(std::memory_order_acquire))
        return look::calm;

    // Step 3: which threads are blocked. A thread is idle (asleep on the event count), making
    // progress (it started a task since the last look, or is in one of the runtime's own short
    // waits), blocked (declared by fj::blocking, or asleep in the kernel at k_blocked_looks reads
    // with no task started between them) or running. Its kernel state is read only while it
    // matters: nobody else is known to run (so the history is ready when work is queued), or spares
    // are alive (their retirement counts the runners).
    const bool work = work_visible(p);
    const bool need_runners = running_spares() > 0;
    census c = read_counters();
    // While spares run, every look reads afresh: step 5 retires by the count of runners.
    read_stalled_states(c, need_runners || (c.runners == 0 && !c.any_idle),
                        need_runners ? std::chrono::steady_clock::time_point{}
                                     : std::chrono::steady_clock::now());

    // Step 4: rescue. Queued work, nobody idle to take it, every thread blocked.
    if (work && !c.any_idle && c.serving > 0 && c.blocked == c.serving) {
        std::lock_guard lock(m_mutex);
        (void)start_spare_locked(spare_reason::rescue);
        return look::soon;
    }

    // Step 5: retire spares beyond the worker count of runners (blocked threads have returned).
    if (need_runners && c.runners > m_workers)
        request_retirements(c.slots, c.runners - m_workers);
    // relaxed: a hint for on_inject(); a submission that misses it waits for the next look.
    m_all_stalled.store(c.runners == 0 && !c.any_idle, std::memory_order_relaxed);
    return next_look(c, work, need_runners);
}

bool rescuer::disarm_if_some_idle() noexcept {
    // Step 2: while some worker is asleep on the pool's event count, queued work wakes it; the
    // monitor sleeps until a wake-up makes every worker busy again. seq_cst store of
    // m_monitor_idle, then seq_cst load of m_active: the Dekker pair with on_all_awake()
    // (monitor_arming.hpp).
    return m_arming.disarm_if_some_idle(m_pool.m_active, m_workers);
}

std::uint32_t rescuer::running_spares() const noexcept {
    std::lock_guard lock(m_mutex);
    return m_running;
}

rescuer::census rescuer::read_counters() noexcept {
    pool& p = m_pool;
    // Only the slot counters, no system calls: a look at a busy pool ends here at O(slots) cost.
    // Declared, idle and progressing threads are settled now; the stalled ones (no task started
    // since the last look) wait in m_stalled for their kernel state.
    census c;
    c.slots = p.m_workers.size();
    m_stalled.clear();
    for (std::size_t i = 0; i < c.slots; ++i) {
        slot& s = m_slots[i];
        if (!s.serving.load(std::memory_order_relaxed))
            continue;
        ++c.serving;
        const worker& w = p.m_workers[i];
        const std::uint64_t tasks = w.m_stats.tasks_run.get();
        if (const std::uint64_t start = s.starts.load(std::memory_order_relaxed);
            start != s.seen_start) { // a new spare in this slot: its history starts now
            s.seen_start = start;
            s.blocked_samples = 0;
            s.running_read_at = {};
        }
        const bool progressed = tasks != s.last_tasks;
        s.last_tasks = tasks;
        if (progressed)
            s.running_read_at = {}; // a new task: what it does has not been read yet
        if (s.declared.load(std::memory_order_relaxed) != 0) {
            ++c.blocked;
        } else if (w.m_stats.sleeps.get() > w.m_stats.wakeups.get()) {
            c.any_idle = true;
            s.blocked_samples = 0;
        } else if (progressed || s.own_waits.load(std::memory_order_relaxed) != 0) {
            ++c.runners; // a task started, or a wait of the runtime's own that ends by itself
            s.blocked_samples = 0;
        } else {
            m_stalled.push_back(i); // capacity reserved: never allocates
        }
    }
    return c;
}

void rescuer::read_stalled_states(census& c, bool read_states,
                                  std::chrono::steady_clock::time_point now) noexcept {
    // A stalled thread whose state is not read counts as running: no rescue on a guess. One
    // found asleep in the kernel is only blocked at k_blocked_looks reads with no task started
    // between them, so a short kernel wait (a contended lock, a page fault) rarely passes for one
    // (step 3). One read running, in a task it has run since, is read again only k_running_reread
    // later (`now` is the epoch when every state must be read afresh: spares alive).
    const bool read_all = now == std::chrono::steady_clock::time_point{};
    const auto read_running_lately = [&](const slot& s) {
        return !read_all && now - s.running_read_at < k_running_reread;
    };
    // One thread known to run rules a rescue out (step 4 needs every thread blocked), so unless
    // step 5 needs the count of runners, reading stops at the first: a long loop of P threads
    // costs one read per k_running_reread, not P.
    // (With read_all it stays false: every state is read.)
    bool runner_known =
        !read_all && std::any_of(m_stalled.begin(), m_stalled.end(),
                                 [&](std::size_t i) { return read_running_lately(m_slots[i]); });
    std::uint64_t reads = 0;
    for (const std::size_t i : m_stalled) {
        slot& s = m_slots[i];
        // acquire: pairs with on_thread_start()'s release.
        const pid_t tid = s.tid.load(std::memory_order_acquire);
        if (tid == 0) {
            s.blocked_samples = 0; // a spare not started yet: counted as running
            ++c.runners;
        } else if (read_running_lately(s)) {
            // Read running in this task not long ago: not read again before k_running_reread,
            // so a sooner look would learn nothing more of it.
            ++c.runners;
        } else if (!read_states) {
            s.blocked_samples = 0; // unknown: counted as running (no rescue on a guess)
            ++c.runners;
        } else if (runner_known) {
            // Not read: another thread runs, so this look rescues nothing whatever this one does.
            // Its history stays: a thread asleep in the kernel at two reads with no task started
            // between them counts as blocked, however far apart the reads.
            ++c.runners;
        } else {
            ++reads;
            if (read_thread_state(tid) != kernel_thread_state::blocked) {
                s.blocked_samples = 0;
                s.running_read_at = now;
                ++c.runners;
                runner_known = !read_all;
            } else if (++s.blocked_samples >= k_blocked_looks) {
                ++c.blocked;
            } else {
                ++c.suspects; // asleep in the kernel once so far: neither running nor blocked yet
            }
        }
    }
    // relaxed, single writer: statistics for snapshot().
    m_state_reads.store(m_state_reads.load(std::memory_order_relaxed) + reads,
                        std::memory_order_relaxed);
}

void rescuer::request_retirements(std::size_t slots, std::size_t surplus) noexcept {
    // Only spares this look did not find blocked or suspect (declared, or asleep in the kernel):
    // the surplus is one of runners. A spare already asked counts towards it without a second
    // request.
    std::lock_guard lock(m_mutex);
    for (std::size_t i = m_workers; i < slots && surplus > 0; ++i) {
        slot& s = m_slots[i];
        if (!s.serving.load(std::memory_order_relaxed) ||
            s.declared.load(std::memory_order_relaxed) != 0 || s.blocked_samples != 0)
            continue;
        if (s.retire_requested.load(std::memory_order_relaxed)) {
            --surplus; // already on its way out
            continue;
        }
        s.retire_requested.store(true, std::memory_order_relaxed);
        --surplus;
    }
}

rescuer::look rescuer::next_look(const census& c, bool work, bool need_runners) noexcept {
    // Soon while queued work may be waiting for a thread found asleep in the kernel once (a
    // suspect) to count as blocked. Calm while anything moves or might (each look wakes a thread
    // on a busy machine): threads that started tasks, stalled threads read running (long tasks,
    // whose states k_running_reread reads at most once per 16 ms), and stalled threads not read
    // because others started tasks: a look sooner would not read them either while tasks keep
    // starting, and in a long loop on many threads some thread starts a task at almost every look
    // (looking every millisecond there cost 1-3% of a core on a 2-core machine). Later while every
    // thread is blocked with nothing queued, which only new work (on_inject) changes.
    if (work && c.suspects > 0)
        return look::soon;
    if (need_runners || c.runners > 0 || c.any_idle || work)
        return look::calm;
    return look::later; // every thread blocked, nothing queued: back off
}

} // namespace fj::detail
