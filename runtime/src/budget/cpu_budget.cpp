// The process's budget of running workers: see cpu_budget.hpp and docs/design/cpu-budget.md.
#include "budget/cpu_budget.hpp"

#include "platform/cpu_quota.hpp"
#include "platform/cpus.hpp"
#include "platform/thread_state.hpp"

#include <algorithm>
#include <new>

namespace fj::detail {

namespace {
cpu_budget*& the_budget() {
    static cpu_budget* budget = nullptr; // constant-initialised: no guard
    return budget;
}
std::size_t process_cpus() noexcept {
    return usable_cpus(affinity_cpu_count(), process_cgroup_cpu_limit());
}
} // namespace

cpu_budget& cpu_budget::instance() {
    // The first use makes it (a thread-safe local static); a child of fork() swaps the pointer
    // while it has one thread (replace_in_child).
    static cpu_budget* const first = the_budget() = new cpu_budget(process_cpus());
    (void)first;
    return *the_budget();
}

void cpu_budget::replace_in_child() noexcept {
    cpu_budget* const old = the_budget();
    if (old != nullptr)
        the_budget() = new (std::nothrow) cpu_budget(old->m_limit);
    if (the_budget() == nullptr)
        the_budget() = old; // out of memory: keep the inherited one
}

cpu_budget::cpu_budget(std::size_t limit) noexcept
    : m_limit(limit == 0 ? 1 : limit), m_free(static_cast<std::int64_t>(m_limit)) {}

void cpu_budget::add_workers(std::size_t n) noexcept {
    m_workers.fetch_add(n, std::memory_order_relaxed);
}

void cpu_budget::remove_workers(std::size_t n) noexcept {
    m_workers.fetch_sub(n, std::memory_order_relaxed);
    m_sleepers.notify_all(); // the budget may be out of force now: let its sleepers re-read
}

void cpu_budget::enrol(worker& w) {
    w.m_tid.store(static_cast<std::int32_t>(current_thread_id()), std::memory_order_relaxed);
    std::lock_guard lock(m_members_mutex);
    m_members.push_back(&w);
}

void cpu_budget::leave(worker& w) noexcept {
    release(w);
    std::lock_guard lock(m_members_mutex);
    m_members.erase(std::remove(m_members.begin(), m_members.end(), &w), m_members.end());
}

bool cpu_budget::try_take() noexcept {
    std::int64_t free = m_free.load(std::memory_order_relaxed);
    // relaxed: a place orders nothing; the work a holder then takes comes through the pool's own
    // synchronisation.
    while (free > 0)
        if (m_free.compare_exchange_weak(free, free - 1, std::memory_order_relaxed))
            return true;
    return false;
}

void cpu_budget::release(worker& w) noexcept {
    if (!w.m_holds_cpu.load(std::memory_order_relaxed))
        return;
    w.m_holds_cpu.store(false, std::memory_order_relaxed);
    // seq_cst: the event count's producer half (event_count.hpp): this increment, then notify's
    // seq_cst load of the sleepers. A sleeper's prepare_wait() is a seq_cst RMW followed by its
    // re-check of m_free, so either it sees this place or we see it and wake it.
    m_free.fetch_add(1, std::memory_order_seq_cst);
    m_sleepers.notify_one();
}

bool cpu_budget::every_holder_blocked() {
    std::lock_guard lock(m_members_mutex);
    for (worker* w : m_members) {
        if (!w->m_holds_cpu.load(std::memory_order_relaxed))
            continue;
        const std::int32_t tid = w->m_tid.load(std::memory_order_relaxed);
        if (tid == 0 || read_thread_state(static_cast<pid_t>(tid)) != kernel_thread_state::blocked)
            return false; // a holder runs (or cannot be read: never taken for blocked)
    }
    return true;
}

void cpu_budget::acquire(worker& w, function_ref<bool()> give_up, bool counted_asleep) {
    if (w.m_holds_cpu.load(std::memory_order_relaxed) || !in_force())
        return;
    if (try_take()) {
        w.m_holds_cpu.store(true, std::memory_order_relaxed);
        return;
    }
    if (!counted_asleep)
        w.m_stats.sleeps.bump();
    auto look = k_starved_look;
    for (;;) {
        (void)m_sleepers.prepare_wait();
        if (!in_force() || give_up()) {
            m_sleepers.cancel_wait();
            break; // run without a place
        }
        if (try_take()) {
            m_sleepers.cancel_wait();
            w.m_holds_cpu.store(true, std::memory_order_relaxed);
            break;
        }
        const bool woken = m_sleepers.commit_wait_until(std::chrono::steady_clock::now() + look);
        if (woken) {
            look = k_starved_look;
            continue;
        }
        if (every_holder_blocked())
            break; // every place is held by a thread asleep in the kernel: run without one
        look = std::min(look * 2, k_starved_look_last);
    }
    if (!counted_asleep)
        w.m_stats.wakeups.bump();
}

} // namespace fj::detail

namespace fj {

std::size_t running_worker_limit() {
    return detail::cpu_budget::instance().limit();
}

} // namespace fj
