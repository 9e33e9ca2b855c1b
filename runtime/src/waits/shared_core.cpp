// The shared block behind fj::shared_future: one waiter on the task's completion, broadcasting to
// any number of listeners. The protocol, its proof sketch and the designs it replaced are in
// docs/design/shared-future.md; the step numbers below are that section's.
//
// Invariants (m_broadcast, m_first and the links are guarded by m_mutex):
//   I1  m_broadcast is false only while the core is registered on the completion and its wake()
//       has not taken the list; it never becomes false again.
//   I2  a listener is on the list only while its owner is inside a wait (or, for a continuation,
//       before it is queued), and holds a reference to the core meanwhile.
//   I3  m_refs = copies of the shared_future (including those inside continuations) + 1 while
//       registered (I1). Hence m_refs == 0 implies the task is done and nobody touches the core.
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <utility>

#include <forkjoin/detail/shared_core.hpp>
#include <forkjoin/detail/wait.hpp>
#include <forkjoin/errors.hpp>

namespace fj::detail {

// The waiter record on the completion is the core itself (its wake() is the broadcast).
class shared_core final : public waiter {
public:
    shared_core(void* state, shared_state_destroy_fn destroy_state) noexcept
        : m_state(state), m_destroy_state(destroy_state) {
        m_wake = &broadcast;
    }

    // Step 1: becomes the completion's one waiter, or ready at once if the task is done.
    void register_on(completion& source) noexcept {
        // relaxed: the core is not shared yet; the registering CAS (release) publishes it, with
        // everything else constructed above, to the producer's finish() (acq_rel exchange).
        m_refs.store(2, std::memory_order_relaxed); // ours + the registration's (I3)
        if (!source.try_register(this)) {
            // Done already (the caller excluded a cancelled source): no broadcast will come.
            m_refs.store(1, std::memory_order_relaxed);
            m_broadcast = true;
        }
    }

    void make_cancelled() {
        m_refs.store(1, std::memory_order_relaxed);
        m_broadcast = true;
        m_cancelled = task_cancelled_error();
    }

    void add_reference() noexcept {
        // relaxed: the caller holds a reference, so the count cannot reach 0 meanwhile, and the
        // new copy publishes nothing through the count.
        m_refs.fetch_add(1, std::memory_order_relaxed);
    }

    // Step 6.
    void drop_reference() noexcept {
        // acq_rel: the release orders this owner's last accesses (reads of the result, the list)
        // before the free; the acquire of the last one pairs with every other owner's release.
        if (m_refs.fetch_sub(1, std::memory_order_acq_rel) != 1)
            return;
        // I3: the task is done (the broadcast dropped the registration's reference, or the core
        // was never registered), so the producer touches the state no more: it is ours to free.
        if (m_state != nullptr)
            m_destroy_state(m_state);
        delete this;
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

    [[noreturn]] void rethrow_cancelled() const { std::rethrow_exception(m_cancelled); }

private:
    ~shared_core() = default;

    // Step 4, on the producer's thread, from the completion's finish() (the task's result is
    // stored and published: finish()'s exchange came first, on this thread).
    static void broadcast(waiter* w) noexcept {
        auto* self = static_cast<shared_core*>(w);
        shared_listener* listeners;
        {
            std::lock_guard lock(self->m_mutex);
            self->m_broadcast = true; // I1: no listener joins or leaves from here on
            listeners = std::exchange(self->m_first, nullptr);
        }
        while (listeners != nullptr) {
            // Read before the wake: the listener may be gone as soon as it is woken.
            shared_listener* next = listeners->m_next;
            listeners->m_wake(listeners);
            listeners = next;
        }
        self->drop_reference(); // the registration's (I3); may free the state and the core
    }

    std::atomic<std::size_t> m_refs{1};
    void* m_state;                           // null for a cancelled future's core
    shared_state_destroy_fn m_destroy_state; // frees m_state
    std::exception_ptr m_cancelled;          // the one fj::task_cancelled of a cancelled core
    std::mutex m_mutex;                      // held for a few pointer moves, never while waiting
    shared_listener* m_first = nullptr;      // guarded by m_mutex
    bool m_broadcast = false;                // guarded by m_mutex (I1)
};

namespace {

// One waiter's own completion: finished by the broadcast, and waited on exactly as a future's
// (detail::wait: run own tasks, park, help, or block off the pool). It lives on the waiter's
// stack; finish() touches it last (completion.hpp), so the wait may return and free it at once.
struct wait_listener final : shared_listener {
    completion woken;

    wait_listener() noexcept { m_wake = &wake; }

    static void wake(waiter* w) noexcept {
        // Never detached: the waiter stays until woken (false is the only possible result).
        (void)static_cast<wait_listener*>(w)->woken.finish();
    }
};

} // namespace

shared_core* make_shared_core(completion& source, void* state,
                              shared_state_destroy_fn destroy_state) {
    auto* core = new shared_core(state, destroy_state);
    core->register_on(source);
    return core;
}

shared_core* make_cancelled_shared_core() {
    auto* core = new shared_core(nullptr, nullptr);
    core->make_cancelled();
    return core;
}

void add_reference(shared_core& core) noexcept {
    core.add_reference();
}

void drop_reference(shared_core& core) noexcept {
    core.drop_reference();
}

// Steps 2 and 3.
void wait_shared(shared_core& core) {
    wait_listener listener;
    if (!core.try_listen(listener))
        return; // broadcast already: the task is done (the lock ordered its result before us)
    wait(listener.woken);
}

// Steps 2, 3 and 5.
bool wait_shared_until(shared_core& core, std::chrono::steady_clock::time_point deadline) {
    wait_listener listener;
    if (!core.try_listen(listener))
        return true;
    if (wait_until(listener.woken, deadline))
        return true;
    if (core.try_unlisten(listener))
        return false;
    // The broadcast took the list with us on it: its wake() is running or about to, and touches
    // our record. Wait for it (a few pointer moves away, not the task) before the record dies.
    wait(listener.woken);
    return true;
}

bool try_listen(shared_core& core, shared_listener& listener) {
    return core.try_listen(listener);
}

void rethrow_cancelled(const shared_core& core) {
    core.rethrow_cancelled();
}

} // namespace fj::detail
