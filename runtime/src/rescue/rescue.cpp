// The rescue of a pool whose workers block: the monitor, spare start and retirement
// (docs/design/rescue.md, whose step numbers the comments below cite).
#include "rescue/rescue.hpp"

#include "loop/worker_loop.hpp"
#include "observe/events.hpp"
#include "platform/thread_state.hpp"
#include "sleep/sleep.hpp"
#include "state/pool.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include <forkjoin/detail/fault_injection.hpp>

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
// A thread counts as blocked after this many looks in a row found it asleep in the kernel
// without having started a task since the look before: a thread that takes a lock for a moment
// is rarely caught twice in a row, and a rescue is only ever started when every thread is.
constexpr std::uint32_t k_blocked_looks = 2;

} // namespace

rescuer::rescuer(pool& p, std::size_t max_spares)
    : m_pool(p), m_workers(p.m_worker_count), m_max_spares(max_spares),
      m_slots(std::make_unique<slot[]>(p.m_worker_count + max_spares)) {
    m_free.reserve(max_spares);
    m_stalled.reserve(p.m_worker_count + max_spares);
    for (std::size_t i = 0; i < m_workers; ++i)
        m_slots[i].serving.store(true, std::memory_order_relaxed); // before any thread starts
}

rescuer::~rescuer() = default;

void rescuer::start() {
    boost::thread::attributes attributes;
    attributes.set_stack_size(std::size_t{256} << 10); // it only reads counters and /proc
    const boost::thread::attributes& attrs = attributes;
    try {
        fault_injection::check(fault_injection::site::thread_start);
        m_monitor = boost::thread(attrs, [this] { monitor_main(); });
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string("fj::scheduler: could not start the rescue monitor "
                                             "thread (set max_spare_workers = 0 to run without "
                                             "it): ") +
                                 e.what());
    }
    // Return once the thread runs its loop, as the workers do before they sleep: its start-up
    // (the thread library's and a sanitizer's allocations) is over before the pool is handed out,
    // so a process fork() made while every worker sleeps never copies it half done.
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [this] { return m_monitor_started; });
}

void rescuer::stop() noexcept {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true; // from now on no spare starts (start_spare_locked checks it)
    }
    m_cv.notify_all();
    if (m_monitor.joinable())
        m_monitor.join();
    // The workers have stopped, so every spare has seen m_stop or retired: each thread ends.
    for (std::size_t i = m_workers; i < m_workers + m_max_spares; ++i)
        if (m_slots[i].thread.joinable())
            m_slots[i].thread.join();
}

void rescuer::on_thread_start(std::size_t index) noexcept {
    // release: pairs with the monitor's acquire load; the id is all it reads through it.
    m_slots[index].tid.store(current_thread_id(), std::memory_order_release);
}

void rescuer::arm() noexcept {
    // seq_cst exchange: only one waker notifies per disarm (step 2).
    if (m_monitor_idle.exchange(false, std::memory_order_seq_cst)) {
        std::lock_guard lock(m_mutex); // the monitor checks the flag under the mutex
        m_cv.notify_one();
    }
}

// --- The monitor (steps 1-5) ---------------------------------------------------------------------

void rescuer::monitor_main() noexcept {
    std::unique_lock lock(m_mutex);
    m_monitor_started = true;
    m_cv.notify_all(); // start() waits on the same condition variable
    auto period = k_alert_period;
    while (!m_stopping) {
        if (m_monitor_idle.load(std::memory_order_seq_cst)) {
            // Step 2: disarmed; a worker that wakes and finds every worker awake arms us.
            m_cv.wait(lock, [this] {
                return m_stopping || !m_monitor_idle.load(std::memory_order_seq_cst);
            });
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

rescuer::look rescuer::sample() {
    pool& p = m_pool;
    // Step 2: while some worker is asleep on the pool's event count, queued work wakes it; the
    // monitor sleeps until a wake-up makes every worker busy again. seq_cst store, then seq_cst
    // load: the Dekker pair with on_all_awake() (a waker's m_active increment, then its load of
    // m_monitor_idle). Either the waker sees the flag and arms, or this load sees its increment.
    if (p.m_active.load(std::memory_order_seq_cst) < m_workers) {
        m_monitor_idle.store(true, std::memory_order_seq_cst);
        if (p.m_active.load(std::memory_order_seq_cst) < m_workers)
            return look::soon;
        m_monitor_idle.store(false, std::memory_order_seq_cst); // raced with a wake-up: go on
    }
    if (p.m_stop.load(std::memory_order_acquire))
        return look::calm;

    // Step 3: which threads are blocked. A thread is idle (asleep on the event count), making
    // progress (it started a task since the last look), blocked (declared by fj::blocking, or
    // asleep in the kernel at k_blocked_looks looks in a row without starting a task) or
    // running. Its kernel state is read only while it matters: nobody else is known to run
    // (so the history is ready when work is queued), or spares are alive (their retirement
    // counts the runners).
    const bool work = work_visible(p);
    std::uint32_t running_spares;
    {
        std::lock_guard lock(m_mutex);
        running_spares = m_running;
    }
    const bool need_runners = running_spares > 0;
    const std::size_t slots = p.m_workers.size();
    // First pass, no system calls: declared, idle, progressing, or stalled (to be read).
    std::size_t serving = 0, blocked = 0, runners = 0;
    bool any_idle = false, any_stalled = false;
    m_stalled.clear();
    for (std::size_t i = 0; i < slots; ++i) {
        slot& s = m_slots[i];
        if (!s.serving.load(std::memory_order_relaxed))
            continue;
        ++serving;
        const worker& w = p.m_workers[i];
        const std::uint64_t tasks = w.m_stats.tasks_run.get();
        if (const std::uint64_t start = s.starts.load(std::memory_order_relaxed);
            start != s.seen_start) { // a new spare in this slot: its history starts now
            s.seen_start = start;
            s.blocked_samples = 0;
        }
        const bool progressed = tasks != s.last_tasks;
        s.last_tasks = tasks;
        if (s.declared.load(std::memory_order_relaxed) != 0) {
            ++blocked;
        } else if (w.m_stats.sleeps.get() > w.m_stats.wakeups.get()) {
            any_idle = true;
            s.blocked_samples = 0;
        } else if (progressed) {
            ++runners;
            s.blocked_samples = 0;
        } else {
            any_stalled = true;
            m_stalled.push_back(i); // capacity reserved: never allocates
        }
    }
    // Second pass: the stalled threads' kernel states, when they can matter.
    const bool read_states = need_runners || (runners == 0 && !any_idle);
    for (const std::size_t i : m_stalled) {
        slot& s = m_slots[i];
        // acquire: pairs with on_thread_start()'s release.
        const pid_t tid = s.tid.load(std::memory_order_acquire);
        if (!read_states || tid == 0) {
            s.blocked_samples = 0; // unknown: counted as running (no rescue on a guess)
            ++runners;
        } else if (read_thread_state(tid) != kernel_thread_state::blocked) {
            s.blocked_samples = 0;
            ++runners;
        } else if (++s.blocked_samples >= k_blocked_looks) {
            ++blocked;
        } // else asleep in the kernel once so far: a suspect, neither running nor blocked yet
    }

    // Step 4: rescue. Queued work, nobody idle to take it, every thread blocked.
    if (work && !any_idle && serving > 0 && blocked == serving) {
        std::lock_guard lock(m_mutex);
        (void)start_spare_locked(spare_reason::rescue);
        return look::soon;
    }

    // Step 5: retire spares beyond the worker count of runners (blocked threads have returned).
    if (need_runners && runners > m_workers) {
        std::size_t surplus = runners - m_workers;
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
    // relaxed: a hint for on_inject(); a submission that misses it waits for the next look.
    m_all_stalled.store(runners == 0 && !any_idle, std::memory_order_relaxed);
    if (work && any_stalled)
        return look::soon;
    if (need_runners || runners > 0 || any_idle || work)
        return look::calm;
    return look::later; // every thread blocked, nothing queued: back off
}

// --- Spares (steps 6-7) --------------------------------------------------------------------------

std::size_t rescuer::start_spare_locked(spare_reason reason) noexcept {
    pool& p = m_pool;
    if (m_stopping || m_running >= m_max_spares || p.m_stop.load(std::memory_order_acquire))
        return k_none;
    // Step 6: counted active before it can take a task (the termination invariant,
    // worker_loop.cpp). seq_cst: in the single order of the workers' decrements; if the last
    // worker's decrement came first and stopped the pool, the load below sees m_stop or the
    // spare does, and then leaves at once.
    p.m_active.fetch_add(1, std::memory_order_seq_cst);
    if (p.m_stop.load(std::memory_order_acquire)) {
        p.m_active.fetch_sub(1, std::memory_order_seq_cst);
        return k_none;
    }
    const bool reuse = !m_free.empty();
    const std::size_t index = reuse ? m_free.back() : p.m_workers.size();
    slot& s = m_slots[index];
    try {
        if (reuse) {
            s.thread.join(); // it has retired and is leaving: its last step was on_spare_retired
        } else {
            auto w = std::make_unique<worker>(&p, index, p.m_options.initial_deque_capacity);
            on_spare_slot_added(p, *w); // trace mode: its buffer; throws std::bad_alloc
            p.m_workers.add(std::move(w));
        }
        worker& w = p.m_workers[index];
        s.retire_requested.store(false, std::memory_order_relaxed);
        s.tid.store(0, std::memory_order_relaxed);
        if (w.observed())
            on_spare_start(w, reason); // before its thread: the thread then owns the buffer
        boost::thread::attributes attributes;
        attributes.set_stack_size(p.m_options.worker_stack_size);
        const boost::thread::attributes& attrs = attributes;
        fault_injection::check(fault_injection::site::thread_start);
        s.serving.store(true, std::memory_order_relaxed);
        s.thread = boost::thread(attrs, [this, index] { spare_main(index); });
    } catch (const std::exception&) {
        // No thread: the slot stays (or becomes) free, and the count taken above is given back.
        // (A reused slot is still at the back of m_free; a new one joins it once added.)
        s.serving.store(false, std::memory_order_relaxed);
        if (!reuse && p.m_workers.size() > index)
            m_free.push_back(index);
        leave_active(p);
        return k_none;
    }
    if (reuse)
        m_free.pop_back();
    ++m_running;
    s.starts.fetch_add(1, std::memory_order_relaxed);
    ++(reason == spare_reason::rescue ? m_rescues : m_handoffs);
    // A spare raises m_active like a wake-up does: arm the monitor the same way (step 2). We
    // hold m_mutex, so notify directly rather than through arm().
    if (p.m_active.load(std::memory_order_seq_cst) >= m_workers &&
        m_monitor_idle.exchange(false, std::memory_order_seq_cst))
        m_cv.notify_one();
    return index;
}

void rescuer::spare_main(std::size_t index) noexcept {
    worker_main(m_pool, index);
    on_spare_retired(index);
}

void rescuer::on_spare_retired(std::size_t index) noexcept {
    std::lock_guard lock(m_mutex);
    slot& s = m_slots[index];
    s.serving.store(false, std::memory_order_relaxed);
    s.tid.store(0, std::memory_order_relaxed);
    --m_running;
    ++m_retired;
    m_free.push_back(index); // its thread is joined when the slot is reused, or by stop()
}

// --- fj::blocking (step 8) -----------------------------------------------------------------------

rescuer::ticket rescuer::begin_blocking(std::size_t index) noexcept {
    // relaxed: the monitor reads it as a hint at its next look; nothing is published through it.
    m_slots[index].declared.fetch_add(1, std::memory_order_relaxed);
    // A worker asleep on the event count takes queued work as soon as it is published: the pool
    // still has a runner to spare, and needs no new thread.
    if (m_pool.m_sleep.has_waiters())
        return {};
    std::lock_guard lock(m_mutex);
    const std::size_t spare = start_spare_locked(spare_reason::blocking);
    if (spare == k_none)
        return {};
    return {spare, m_slots[spare].starts.load(std::memory_order_relaxed)};
}

void rescuer::end_blocking(std::size_t index, ticket spare) noexcept {
    m_slots[index].declared.fetch_sub(1, std::memory_order_relaxed);
    if (spare.index == k_none)
        return;
    std::lock_guard lock(m_mutex);
    slot& s = m_slots[spare.index];
    if (s.starts.load(std::memory_order_relaxed) == spare.start &&
        s.serving.load(std::memory_order_relaxed))
        s.retire_requested.store(true, std::memory_order_relaxed);
}

rescuer::counts rescuer::snapshot() const noexcept {
    std::lock_guard lock(m_mutex);
    return {m_rescues, m_handoffs, m_retired, m_running};
}

} // namespace fj::detail
