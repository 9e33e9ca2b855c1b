// The process's timers and their thread (timers.hpp; docs/design/timers.md).
#include "timers/timers.hpp"

#include "platform/cpus.hpp"
#include "platform/thread_name.hpp"
#include "state/own_wait.hpp"

#include <algorithm>
#include <new>
#include <thread>

namespace fj::detail {
namespace {

timers*& the_timers() noexcept {
    static timers* instance = nullptr; // constant-initialised: no guard
    return instance;
}

timer_ticks ticks(timers::clock::time_point t) noexcept {
    return t.time_since_epoch().count();
}

timer_ticks now_ticks() noexcept {
    return ticks(timers::clock::now());
}

// One shard per CPU, at most 64: beyond that a shard's lock is taken by a few threads at most,
// while the timer thread's scan over the fronts grows with every shard. The larger of the
// affinity mask and the online CPUs: the first arm may come from a thread pinned to one CPU.
std::size_t shards_for_this_machine() noexcept {
    constexpr std::size_t k_most = 64;
    const std::size_t cpus =
        std::max<std::size_t>(affinity_cpu_count(), std::thread::hardware_concurrency());
    return std::clamp<std::size_t>(cpus, 1, k_most);
}

} // namespace

timers::timers() : m_shard_count(shards_for_this_machine()), m_shards(new shard[m_shard_count]) {}

timers& timers::instance() {
    // The first use makes them (a thread-safe local static); a fork() child swaps the pointer
    // while it has one thread.
    static timers* const first = the_timers() = new timers();
    (void)first;
    return *the_timers();
}

void timers::replace_in_child() noexcept {
    // The parent's entries belong to threads that are not in the child, and its mutexes may have
    // been held by its timer thread at the fork. The old object is left behind, never touched.
    // Without memory for new ones the child keeps the parent's object, whose thread is not in the
    // child: a timed wait there then ends only by its release.
    if (the_timers() != nullptr) {
        try {
            the_timers() = new timers();
        } catch (const std::bad_alloc&) {
        }
    }
}

timers::shard& timers::home_shard() noexcept {
    // Dealt round robin at a thread's first arm: threads spread over the shards whatever their
    // ids. A relaxed count: the ticket only has to differ between threads, not order anything.
    static std::atomic<std::size_t> next_ticket{0};
    thread_local const std::size_t ticket = next_ticket.fetch_add(1, std::memory_order_relaxed);
    return m_shards[ticket % m_shard_count];
}

void timers::start_thread() {
    std::lock_guard lock(m_start_mutex);
    if (m_started.load(std::memory_order_relaxed))
        return;
    // Detached: the thread lives as long as the process (the object is never destroyed), so
    // nothing at exit waits for a sleeping timer thread. Its start is a wait of our own: a
    // worker starting it must not pass for blocked.
    const own_wait_scope starting;
    std::thread([this] { run(); }).detach();
    // Release: pairs with arm()'s acquire load; an arm that sees the flag skips the mutex.
    m_started.store(true, std::memory_order_release);
}

void timers::arm(entry& e) {
    if (!m_started.load(std::memory_order_acquire))
        start_thread(); // throws std::system_error: e is not armed
    const timer_ticks deadline = ticks(e.deadline);
    shard& s = home_shard();
    {
        std::lock_guard lock(s.mutex);
        e.home = &s;
        e.position = s.due.emplace(deadline, &e); // throws std::bad_alloc: e is not armed
        e.armed = true;
        if (e.position == s.due.begin())
            s.front.publish(deadline); // step 1: a new front, then the plan (step 2)
    }
    // From here e may have fired and been freed: only the copy of its deadline is read.
    if (m_plan.must_poke(deadline))
        poke();
}

void timers::disarm(entry& e) noexcept {
    shard* s = e.home;
    if (s == nullptr)
        return; // never armed
    // fire() runs under the shard's mutex: once we hold it, a firing entry has finished firing.
    std::lock_guard lock(s->mutex);
    if (e.armed) {
        const bool was_front = e.position == s->due.begin();
        s->due.erase(e.position);
        e.armed = false;
        if (was_front) // a later front: the timer thread may wake for nothing, never too late
            s->front.publish(s->due.empty() ? k_no_deadline : s->due.begin()->first);
    }
}

void timers::poke() noexcept {
    {
        std::lock_guard lock(m_sleep_mutex);
        m_poked = true;
    }
    m_poked_cv.notify_one();
}

void timers::fire_due(shard& s, timer_ticks now) noexcept {
    std::lock_guard lock(s.mutex);
    while (!s.due.empty() && s.due.begin()->first <= now) {
        const auto first = s.due.begin();
        entry& e = *first->second;
        s.due.erase(first);
        e.armed = false;
        e.fire(e); // under the shard's mutex: disarm() waits for it; e may be gone after it
    }
    s.front.publish(s.due.empty() ? k_no_deadline : s.due.begin()->first);
}

void timers::sleep_until(timer_ticks next) noexcept {
    std::unique_lock lock(m_sleep_mutex);
    if (next == k_no_deadline) {
        m_poked_cv.wait(lock, [this] { return m_poked; });
    } else {
        const clock::time_point until{clock::duration(next)};
        m_poked_cv.wait_until(lock, until, [this] { return m_poked; });
    }
    m_poked = false;
}

void timers::run() noexcept {
    name_this_thread("fj-timers");
    const fronts_view fronts{this};
    for (;;) {
        m_plan.start_looking(); // step 3
        const timer_ticks now = now_ticks();
        timer_ticks next = k_no_deadline;
        for (std::size_t i = 0; i < m_shard_count; ++i) {
            shard& s = m_shards[i];
            if (s.front.hint() <= now)
                fire_due(s, now);
            next = std::min(next, s.front.hint());
        }
        if (!m_plan.settle(next, fronts)) // step 4
            continue;
        sleep_until(next); // step 5
    }
}

} // namespace fj::detail
