// The process's timer thread (timers.hpp).
#include "sync/timers.hpp"

#include "platform/thread_name.hpp"
#include "state/own_wait.hpp"

#include <new>

namespace fj::detail {
namespace {
timers*& the_timers() noexcept {
    static timers* instance = nullptr; // constant-initialised: no guard
    return instance;
}
} // namespace

timers& timers::instance() {
    // The first use makes them (a thread-safe local static); a fork() child swaps the pointer
    // while it has one thread.
    static timers* const first = the_timers() = new timers();
    (void)first;
    return *the_timers();
}

void timers::replace_in_child() noexcept {
    // The parent's entries belong to threads that are not in the child, and its mutex may have
    // been held by its timer thread at the fork. The old object is left behind, never touched.
    if (the_timers() != nullptr) {
        timers* fresh = new (std::nothrow) timers();
        if (fresh != nullptr)
            the_timers() = fresh;
    }
}

void timers::arm(entry& e) {
    std::unique_lock lock(m_mutex);
    if (!m_started) {
        // Detached: the thread lives as long as the process (the object is never destroyed), so
        // nothing at exit waits for a sleeping timer thread. Its start is a wait of our own: a
        // worker starting it must not pass for blocked.
        const own_wait_scope starting;
        std::thread([this] { run(); }).detach();
        m_started = true;
    }
    e.position = m_due.emplace(e.deadline, &e);
    e.armed = true;
    if (e.position == m_due.begin())
        m_changed.notify_one(); // the thread may be sleeping towards a later deadline
}

void timers::disarm(entry& e) noexcept {
    // fire() runs under the mutex: once we hold it, a firing entry has finished firing.
    std::lock_guard lock(m_mutex);
    if (e.armed) {
        m_due.erase(e.position);
        e.armed = false;
    }
}

void timers::run() noexcept {
    name_this_thread("fj-timers");
    std::unique_lock lock(m_mutex);
    for (;;) {
        if (m_due.empty()) {
            m_changed.wait(lock);
            continue;
        }
        const auto first = m_due.begin();
        // A copy: the entry may be disarmed (its node freed) while we wait.
        const clock::time_point deadline = first->first;
        if (clock::now() < deadline) {
            m_changed.wait_until(lock, deadline);
            continue;
        }
        entry& e = *first->second;
        m_due.erase(first);
        e.armed = false;
        e.fire(e); // under the mutex: disarm() waits for it
    }
}

} // namespace fj::detail
