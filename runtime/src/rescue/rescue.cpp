// The rescue of a pool whose workers block: its lifecycle, spare start and retirement, and
// fj::blocking's hand-off (docs/design/rescue.md, whose step numbers the comments below cite).
// The monitor thread and its look at the pool are in monitor.cpp.
#include "rescue/rescue.hpp"

#include "loop/worker_loop.hpp"
#include "observe/events.hpp"
#include "parking/parking.hpp"
#include "platform/thread_state.hpp"
#include "sleep/sleep.hpp"
#include "state/pool.hpp"

#include <algorithm>
#include <exception>

#include <forkjoin/detail/fault_injection.hpp>

namespace fj::detail {

rescuer::rescuer(pool& p, std::size_t max_spares)
    : m_pool(p), m_workers(p.m_worker_count), m_max_spares(max_spares),
      m_slots(std::make_unique<slot[]>(p.m_workers.capacity())) {
    // A slot per index of the pool's set: spares and callers' slots take indices in the order
    // they are added. A caller's slot is never serving, so the monitor passes over it.
    m_free.reserve(max_spares);
    m_stalled.reserve(p.m_workers.capacity());
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
    for (std::size_t i = m_workers; i < m_pool.m_workers.capacity(); ++i)
        if (m_slots[i].thread.joinable())
            m_slots[i].thread.join();
}

void rescuer::on_thread_start(std::size_t index) noexcept {
    // release: pairs with the monitor's acquire load in read_stalled_states() (monitor.cpp); the
    // id is all it reads through it.
    m_slots[index].tid.store(current_thread_id(), std::memory_order_release);
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
    if (reuse) // the lowest free slot, at the back: live slots stay low, and looks stop early
        std::swap(*std::min_element(m_free.begin(), m_free.end()), m_free.back());
    std::size_t index = reuse ? m_free.back() : k_none;
    try {
        if (reuse) {
            // It has retired and is leaving: its last step was on_spare_retired.
            m_slots[index].thread.join();
        } else {
            index = p.m_workers
                        .add([&p](std::size_t i) {
                            auto w = std::make_unique<worker>(
                                &p, i, p.m_options.initial_deque_capacity, slot_role::spare);
                            on_slot_added(p, *w); // trace mode: its buffer; throws bad_alloc
                            return w;
                        })
                        .m_index;
        }
        slot& s = m_slots[index];
        worker& w = p.m_workers[index];
        s.retire_requested.store(false, std::memory_order_relaxed);
        s.tid.store(0, std::memory_order_relaxed);
        if (w.observed())
            on_spare_start(w, reason); // before its thread: the thread then owns the buffer
        boost::thread::attributes attributes;
        // After the join above: the slot's stack cache is no other thread's now.
        attributes.set_stack_size(prepare_thread_stack(p, index));
        const boost::thread::attributes& attrs = attributes;
        fault_injection::check(fault_injection::site::thread_start);
        s.serving.store(true, std::memory_order_relaxed);
        if (reuse)
            p.m_workers.occupy(index); // in looks' range before its thread can push
        s.thread = boost::thread(attrs, [this, index] { spare_main(index); });
    } catch (const std::exception&) {
        // No thread: the slot stays (or becomes) free, and the count taken above is given back.
        // (A reused slot is still at the back of m_free; a new one joins it once added.)
        if (index != k_none) {
            give_back_first_loop_stack(p, index); // if it was taken
            m_slots[index].serving.store(false, std::memory_order_relaxed);
            p.m_workers.vacate(index); // it never ran: its deque is empty
            if (!reuse)
                m_free.push_back(index);
        }
        leave_active(p);
        return k_none;
    }
    if (reuse)
        m_free.pop_back();
    ++m_running;
    m_slots[index].starts.fetch_add(1, std::memory_order_relaxed);
    ++(reason == spare_reason::rescue ? m_rescues : m_handoffs);
    // A spare raises m_active like a wake-up does: arm the monitor the same way (step 2). We
    // hold m_mutex, so notify directly rather than through arm().
    if (p.m_active.load(std::memory_order_seq_cst) >= m_workers && m_arming.arm())
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
    // It left with an empty deque and resumable slot (step 7), which only it fills.
    m_pool.m_workers.vacate(index);
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
    return {m_rescues,
            m_handoffs,
            m_retired,
            m_running,
            m_looks.load(std::memory_order_relaxed),
            m_state_reads.load(std::memory_order_relaxed)};
}

} // namespace fj::detail
