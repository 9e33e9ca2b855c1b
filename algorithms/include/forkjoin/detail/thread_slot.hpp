// A small dense number for the calling thread: the index into the per-thread tables of
// fj::enumerable_thread_specific and fj::combinable.
//
// Every thread that asks gets the lowest number no live thread holds; a thread returns its number
// when it exits, and a later thread may get it again. Numbers are therefore bounded by the most
// threads that ever asked at once (the pool's workers plus the outside threads), so the tables
// indexed by them stay small however many threads come and go.
//
// Why a number and not a cache of (container, element) pairs per thread: a container then holds
// its own table and no thread holds anything of it, so a destroyed container leaves nothing
// behind that a later container at the same address could be confused with.
//
// Migration: a task that waits may resume on another thread (docs/design/parking.md), and
// compilers keep a thread-local's address once computed for the rest of a function. So the number
// is read in a function that is never inlined: each call computes the address afresh on the
// thread that makes it, and a call reads memory, so it is not merged with an earlier call across
// another opaque call (such as a wait).
#pragma once

#include <cstddef>
#include <limits>
#include <mutex>
#include <vector>

namespace fj::detail {

class thread_slot_registry {
public:
    static constexpr std::size_t k_none = std::numeric_limits<std::size_t>::max();

    // Never destroyed: threads may exit (and give their number back) after static destructors
    // have begun.
    static thread_slot_registry& instance() {
        static thread_slot_registry* const registry = new thread_slot_registry;
        return *registry;
    }

    std::size_t take() {
        std::lock_guard lock(m_mutex);
        if (m_free.empty())
            return m_next++;
        // The lowest free number keeps the tables dense.
        auto lowest = m_free.begin();
        for (auto it = m_free.begin(); it != m_free.end(); ++it)
            if (*it < *lowest)
                lowest = it;
        const std::size_t slot = *lowest;
        *lowest = m_free.back();
        m_free.pop_back();
        return slot;
    }

    // The mutex orders the old thread's last use of its elements before the new thread's first.
    void give_back(std::size_t slot) {
        std::lock_guard lock(m_mutex);
        m_free.push_back(slot);
    }

private:
    std::mutex m_mutex;
    std::size_t m_next = 0;          // guarded by m_mutex
    std::vector<std::size_t> m_free; // guarded by m_mutex
};

// The calling thread's number; k_none before the first call and after the thread's exit began.
inline thread_local std::size_t t_thread_slot = thread_slot_registry::k_none;
inline thread_local bool t_thread_slot_exiting = false;

// Gives the number back when the thread exits.
struct thread_slot_owner {
    ~thread_slot_owner() {
        t_thread_slot_exiting = true;
        thread_slot_registry::instance().give_back(t_thread_slot);
        t_thread_slot = thread_slot_registry::k_none;
    }
};

[[gnu::noinline]] inline std::size_t take_thread_slot() {
    t_thread_slot = thread_slot_registry::instance().take();
    // A thread-local destructor that uses a container takes a number it never gives back; the
    // owner object cannot be made again once the thread's thread-locals are being destroyed.
    if (!t_thread_slot_exiting) {
        static thread_local thread_slot_owner owner;
        (void)owner;
    }
    return t_thread_slot;
}

// Never inlined (see the top of this file): the caller gets the number of the thread it runs on
// now, even after a wait that moved it.
[[gnu::noinline]] inline std::size_t this_thread_slot() {
    const std::size_t slot = t_thread_slot;
    return slot != thread_slot_registry::k_none ? slot : take_thread_slot();
}

} // namespace fj::detail
