// The process's timers: deadlines of parked waits (timed waits of the task-parking primitives,
// fj::this_task::sleep_for). A parked task cannot watch the clock, so one thread does it for all
// of them. The thread starts with the first timer ever armed: a process that arms none has no
// thread and no wake-up. While none is armed it sleeps without a timeout.
//
// Lock order: the timers' mutex, then a primitive's lock (a timer's fire() takes it to withdraw
// its waiter). Nobody takes the timers' mutex while holding a primitive's lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace fj::detail {

class timers {
public:
    using clock = std::chrono::steady_clock;

    struct entry {
        clock::time_point deadline;
        void (*fire)(entry&) noexcept = nullptr; // runs on the timer thread, under its mutex
        std::multimap<clock::time_point, entry*>::iterator position;
        bool armed = false; // guarded by the timers' mutex
    };

    // The process's timers (a fork() child gets new ones: replace_in_child()).
    static timers& instance();
    // In a fork() child, while it has one thread: the parent's timer thread is not here.
    static void replace_in_child() noexcept;

    // Calls e.fire(e) at e.deadline, on the timer thread. Throws std::system_error if the
    // thread cannot be started.
    void arm(entry& e);
    // After it returns, e.fire is not running and will not run: the entry may be destroyed.
    void disarm(entry& e) noexcept;

private:
    timers() = default;
    void run() noexcept;

    std::mutex m_mutex;
    std::condition_variable m_changed; // an earlier deadline was armed
    std::multimap<clock::time_point, entry*> m_due;
    bool m_started = false;
};

} // namespace fj::detail
