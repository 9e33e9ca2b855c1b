// The shared block behind fj::shared_future: one waiter on the task's completion, broadcasting to
// any number of listeners. The protocol, its proof sketch and the designs it replaced are in
// docs/design/shared-future.md; the step numbers below are that section's. The reference count,
// the list and the broadcast (with the invariants I1-I3) are shared_core_sync.hpp's.
#include "waits/shared_core_sync.hpp"

#include <chrono>
#include <exception>

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
        m_sync.start_registered(); // published by the registering CAS (release)
        if (!source.try_register(this)) {
            // Done already (the caller excluded a cancelled source): no broadcast will come.
            m_sync.start_ready();
        }
    }

    void make_cancelled() {
        m_sync.start_ready();
        m_cancelled = task_cancelled_error();
    }

    void add_reference() noexcept { m_sync.add_reference(); }

    // Step 6.
    void drop_reference() noexcept {
        if (m_sync.drop_reference())
            free();
    }

    bool try_listen(shared_listener& l) { return m_sync.try_listen(l); }
    bool try_unlisten(shared_listener& l) { return m_sync.try_unlisten(l); }

    [[noreturn]] void rethrow_cancelled() const { std::rethrow_exception(m_cancelled); }

private:
    ~shared_core() = default;

    // The last reference is gone: the task is done (I3), so the producer touches the state no
    // more: it is ours to free.
    void free() noexcept {
        if (m_state != nullptr)
            m_destroy_state(m_state);
        delete this;
    }

    // Step 4, the completion's wake().
    static void broadcast(waiter* w) noexcept {
        auto* self = static_cast<shared_core*>(w);
        if (self->m_sync.broadcast()) // the registration's reference (I3) was the last
            self->free();
    }

    shared_core_sync m_sync;                 // the count, the list, the broadcast flag
    void* m_state;                           // null for a cancelled future's core
    shared_state_destroy_fn m_destroy_state; // frees m_state
    std::exception_ptr m_cancelled;          // the one fj::task_cancelled of a cancelled core
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
