// The process's timers: deadlines of parked waits (timed waits of the task-parking primitives,
// fj::this_task::sleep_for). A parked task cannot watch the clock, so one thread does it for all
// of them. The thread starts with the first timer ever armed: a process that arms none has no
// thread and no wake-up. While none is armed it sleeps without a timeout.
//
// Entries are kept in shards, one per CPU the process may use (at most 64), each with its own
// mutex and map; a thread arms into the shard it was dealt at its first arm, so timed waits on
// different threads take different locks. The timer thread sleeps towards the earliest deadline
// of all shards, and an arm wakes it only when it armed an earlier one (timer_plan.hpp; the
// protocol is docs/design/timers.md).
//
// Lock order: a shard's mutex, then a primitive's lock (a timer's fire() takes it to withdraw its
// waiter). Nobody takes a shard's mutex while holding a primitive's lock. The timer thread's
// sleep mutex is taken with no other lock held and takes none.
#pragma once

#include "timers/timer_plan.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace fj::detail {

class timers {
public:
    using clock = std::chrono::steady_clock;
    struct shard;

    struct entry {
        clock::time_point deadline;
        void (*fire)(entry&) noexcept =
            nullptr;           // runs on the timer thread, under its shard's mutex
        shard* home = nullptr; // set by arm(); read by disarm()
        std::multimap<timer_ticks, entry*>::iterator position;
        bool armed = false; // guarded by the home shard's mutex
    };

    // Deadlines of one group of threads. 128-byte aligned: arms on different threads do not share
    // its lines.
    struct alignas(128) shard {
        std::mutex mutex;
        std::multimap<timer_ticks, entry*> due; // guarded by `mutex`
        timer_front front;                      // due's earliest key; published under `mutex`
    };

    // The process's timers (a fork() child gets new ones: replace_in_child()).
    static timers& instance();
    // In a fork() child, while it has one thread: the parent's timer thread is not here.
    static void replace_in_child() noexcept;

    // Calls e.fire(e) at e.deadline, on the timer thread. Throws std::system_error if the
    // thread cannot be started, std::bad_alloc if the entry cannot be stored; e is then not armed.
    // e may fire (and be freed by its fire()) before arm() returns: arm() does not touch it after
    // storing it.
    void arm(entry& e);
    // After it returns, e.fire is not running and will not run: the entry may be destroyed.
    void disarm(entry& e) noexcept;

    // How many shards this process's timers have (for tests and probes).
    std::size_t shard_count() const noexcept { return m_shard_count; }

private:
    timers();
    void start_thread();
    shard& home_shard() noexcept;
    void run() noexcept;
    void fire_due(shard& s, timer_ticks now) noexcept;
    void sleep_until(timer_ticks next) noexcept;
    void poke() noexcept;

    // The shards' fronts as settle() reads them (timer_plan.hpp).
    struct fronts_view {
        const timers* owner;
        struct iterator {
            const shard* at;
            const timer_front& operator*() const noexcept { return at->front; }
            iterator& operator++() noexcept {
                ++at;
                return *this;
            }
            bool operator!=(const iterator& other) const noexcept { return at != other.at; }
        };
        iterator begin() const noexcept { return {owner->m_shards.get()}; }
        iterator end() const noexcept { return {owner->m_shards.get() + owner->m_shard_count}; }
    };

    const std::size_t m_shard_count;
    const std::unique_ptr<shard[]> m_shards;
    timer_plan m_plan;

    std::atomic<bool> m_started{false};
    std::mutex m_start_mutex; // taken only until the thread has started

    // The timer thread's sleep: an arm that must_poke() sets m_poked under the mutex and notifies.
    std::mutex m_sleep_mutex;
    std::condition_variable m_poked_cv;
    bool m_poked = false; // guarded by m_sleep_mutex
};

} // namespace fj::detail
