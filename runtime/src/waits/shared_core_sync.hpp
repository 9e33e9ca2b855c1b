// The synchronisation of a shared future's core (docs/design/shared-future.md; the step numbers
// below are that file's): the reference count, lock-free, and the list of listeners with its
// broadcast flag, under a mutex. shared_core.cpp instantiates it with std_atomics and std::mutex;
// the model test (test/model/shared_future_model_test.cpp) with Relacy's atomics and mutex.
//
// Invariants (m_broadcast, m_first and the links are guarded by m_mutex):
//   I1  m_broadcast is false only while the core is registered on the completion and its
//       broadcast() has not taken the list; it never becomes false again.
//   I2  a listener is on the list only while its owner is inside a wait (or, for a continuation,
//       before it is queued), and holds a reference to the core meanwhile.
//   I3  m_refs = copies of the shared_future (including those inside continuations) + 1 while
//       registered (I1). Hence m_refs == 0 implies the task is done and nobody touches the core.
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>

#include <forkjoin/detail/atomics.hpp>
#include <forkjoin/detail/shared_core.hpp>

namespace fj::detail {

template <class Atomics = std_atomics, class Mutex = std::mutex>
class basic_shared_core_sync {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    // Step 1, before the registering CAS: ours + the registration's (I3). relaxed: the core is
    // not shared yet; the registering CAS (release) publishes it, with everything else
    // constructed before it, to the producer's finish() (acq_rel exchange).
    void start_registered() noexcept { m_refs.store(2, std::memory_order_relaxed); }

    // Step 1, the registration failed (the task is done) or the future was cancelled before
    // share(): no broadcast will come, and the core is not shared yet (relaxed).
    void start_ready() noexcept {
        m_refs.store(1, std::memory_order_relaxed);
        m_broadcast = true;
    }

    void add_reference() noexcept {
        // relaxed: the caller holds a reference, so the count cannot reach 0 meanwhile, and the
        // new copy publishes nothing through the count.
        m_refs.fetch_add(1, std::memory_order_relaxed);
    }

    // Step 6. True if this was the last reference: the caller frees the state and the core.
    [[nodiscard]] bool drop_reference() noexcept {
        // acq_rel: the release orders this owner's last accesses (reads of the result, the list)
        // before the free; the acquire of the last one pairs with every other owner's release.
        // I3: at 0 the task is done (the broadcast dropped the registration's reference, or the
        // core was never registered), so the producer touches the state no more.
        return m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }

    // Step 2: a listener goes on the list unless the broadcast has taken it.
    bool try_listen(shared_listener& l) {
        std::lock_guard lock(m_mutex);
        if (m_broadcast)
            return false;
        l.m_prev = nullptr;
        l.m_next = m_first;
        if (m_first != nullptr)
            m_first->m_prev = &l;
        m_first = &l;
        return true;
    }

    // Step 5: a listener whose wait timed out leaves the list; false if the broadcast took it
    // first (then its wake() is running or about to, and the listener must wait for it).
    bool try_unlisten(shared_listener& l) {
        std::lock_guard lock(m_mutex);
        if (m_broadcast)
            return false;
        if (l.m_prev != nullptr)
            l.m_prev->m_next = l.m_next;
        else
            m_first = l.m_next;
        if (l.m_next != nullptr)
            l.m_next->m_prev = l.m_prev;
        return true;
    }

    // Step 4, on the producer's thread, from the completion's finish() (the task's result is
    // stored and published: finish()'s exchange came first, on this thread). Wakes every
    // listener, then drops the registration's reference (I3): true if that was the last one, and
    // the caller frees the state and the core.
    [[nodiscard]] bool broadcast() noexcept {
        shared_listener* listeners;
        {
            std::lock_guard lock(m_mutex);
            m_broadcast = true; // I1: no listener joins or leaves from here on
            listeners = std::exchange(m_first, nullptr);
        }
        while (listeners != nullptr) {
            // Read before the wake: the listener may be gone as soon as it is woken.
            shared_listener* next = listeners->m_next;
            listeners->m_wake(listeners);
            listeners = next;
        }
        return drop_reference();
    }

private:
    atomic<std::size_t> m_refs{1};
    Mutex m_mutex;                      // held for a few pointer moves, never while waiting
    shared_listener* m_first = nullptr; // guarded by m_mutex
    bool m_broadcast = false;           // guarded by m_mutex (I1)
};

using shared_core_sync = basic_shared_core_sync<>;

} // namespace fj::detail
