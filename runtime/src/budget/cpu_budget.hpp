// One budget of running workers for the whole process (docs/design/cpu-budget.md): while the
// pools that share it have more workers in all than the process has CPUs, a worker looks for work
// only while it holds one of that many places, so two busy pools of 2 and 1 on 2 CPUs run 2
// workers at once, not 3 (oneTBB's arenas draw on one set of workers the same way).
//
// A place is taken when a worker starts and when it wakes, and given back when it goes to sleep
// or ends: never per task, steal or fork. While the pools fit on the CPUs the budget is not in
// force and a worker's check is one relaxed load. A worker that finds no place sleeps on the
// budget's own event count, counted asleep (its pool's rescue sees it idle and starts no spare
// for it); a place given back wakes one such sleeper. A sleeper that has waited k_starved_look
// without a place looks at the holders: when every one is asleep in the kernel (blocked inside
// a task on something that may need this sleeper's pool), it runs without a place, as the rescue
// of blocked pools would. Spares never take a place: they stand in for blocked workers.
#pragma once

#include "state/event_count.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <forkjoin/detail/function_ref.hpp>
#include <forkjoin/detail/sleep_word.hpp>
#include <forkjoin/detail/worker.hpp>

namespace fj::detail {

class cpu_budget {
public:
    // How long a worker waits for a place before it looks at what the holders do; while holders
    // run, the wait doubles up to k_starved_look_last (a look reads /proc once per holder).
    static constexpr std::chrono::milliseconds k_starved_look{1};
    static constexpr std::chrono::milliseconds k_starved_look_last{16};

    // The process's budget, made on first use with the CPUs the process may use then; never
    // destroyed (workers may end after static destructors have begun).
    static cpu_budget& instance();
    // Process fork() (process_fork.cpp): made before the fork, so that no thread is inside its
    // first use then; in the child, replaced by a fresh one (the parent's holders, sleepers and
    // mutexes do not exist there). The old one is left behind, as the pools of the parent are.
    static void prepare_for_fork() { (void)instance(); }
    static void replace_in_child() noexcept;

    std::size_t limit() const noexcept { return m_limit; }
    bool in_force() const noexcept { return m_workers.load(std::memory_order_relaxed) > m_limit; }

    // A pool that shares the budget joins with its worker count when it starts and leaves when
    // it has stopped. Leaving may end the budget's force: its sleepers are woken to run.
    void add_workers(std::size_t n) noexcept;
    void remove_workers(std::size_t n) noexcept;

    // A worker thread that shares the budget enrols when it starts (its thread id for the
    // starving look) and leaves when it ends, giving back its place if it holds one.
    void enrol(worker& w);
    void leave(worker& w) noexcept;

    // Before worker w looks for work: returns at once if w holds a place or the budget is not in
    // force; else takes a place, sleeping until one is given back, until every holder is asleep
    // in the kernel (w then runs without one), or until give_up() (a closing pool: w drains it
    // without one). `counted_asleep`: w's pool already counts it asleep (a wake-up in progress);
    // otherwise the wait is counted as a sleep in w's statistics, so the rescue sees w idle.
    void acquire(worker& w, function_ref<bool()> give_up, bool counted_asleep);
    // w is going to sleep or ending: its place, if it holds one, goes to a sleeper.
    void release(worker& w) noexcept;
    // The same from a worker that may never have used the budget: touches it only when w holds
    // a place, so a pool that does not share it never makes it.
    static void release_if_held(worker& w) noexcept {
        if (w.m_holds_cpu.load(std::memory_order_relaxed))
            instance().release(w);
    }
    // A pool is closing: its workers asleep here re-check give_up() now rather than at their
    // next look.
    void wake_sleepers() noexcept { m_sleepers.notify_all(); }

private:
    explicit cpu_budget(std::size_t limit) noexcept;
    bool try_take() noexcept;
    bool every_holder_blocked();

    const std::size_t m_limit;
    // Places not held: m_limit minus the holders. Taken by a CAS that never goes below zero;
    // given back by a seq_cst increment (the producer's half of the event count's Dekker pair).
    alignas(128) std::atomic<std::int64_t> m_free;
    // The worker count of every pool that shares the budget (relaxed: read as a hint of force;
    // a change wakes every sleeper, which re-reads it).
    alignas(128) std::atomic<std::size_t> m_workers{0};
    alignas(128) sleep_word m_word;
    event_count m_sleepers{m_word};
    std::mutex m_members_mutex; // the enrolled workers: the starving look's only reader
    std::vector<worker*> m_members;
};

} // namespace fj::detail
