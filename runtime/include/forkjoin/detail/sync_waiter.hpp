// What the task-parking primitives (fj::mutex, shared_mutex, condition_variable, latch, barrier,
// counting_semaphore, channel) share: a waiter record on the waiting task's stack, the FIFO of such
// records that a primitive keeps under its own lock, and the wait itself (docs/design/sync.md).
//
// A waiter is released exactly once, by whoever takes it out of the queue under the primitive's
// lock: the releaser writes `outcome` (and any payload) under that lock, drops the lock, then
// calls release(). The release is the completion protocol's finish(), so the waiter's wait ends
// with everything the releaser wrote visible (finish() is the release half, the waiter's
// is_ready() the acquire half), and release() is the releaser's last touch of the record
// (docs/design/completion.md): the waiter may return and pop its stack at once.
#pragma once

#include "atomics.hpp"
#include "completion.hpp"
#include "park_reason.hpp"

#include <chrono>
#include <cstdint>
#include <utility>

namespace fj::detail {

enum class wait_outcome : std::uint8_t {
    queued,    // in its primitive's queue (or not yet queued)
    granted,   // released by the primitive: the lock, a token, a phase, a value...
    woken,     // released to try again (a mutex freed for its queued waiters to compete for)
    timed_out, // taken out of the queue by its deadline
    closed,    // released by channel::close()
};

// Atomics: std_atomics in the runtime; the model tests pass Relacy's (atomics.hpp).
template <class Atomics = std_atomics>
struct basic_sync_waiter {
    basic_completion<Atomics> released;
    basic_sync_waiter* next = nullptr;
    basic_sync_waiter* prev = nullptr;
    wait_outcome outcome = wait_outcome::queued;
    bool asked_hand_over = false; // a mutex's waiter that asked for the hand-over mode
    bool wants_shared = false;    // a shared mutex's waiter for a shared lock (not a writer)
    void* payload = nullptr;      // a channel's value to send, or the slot a receiver fills
};
using sync_waiter = basic_sync_waiter<>;
class coroutine_waiter; // the coroutine forms' (coroutine_waiter.hpp, <forkjoin/sync_await.hpp>)
class queue_awaiter;

// Ends w's wait: call after writing its outcome under the primitive's lock and dropping the lock.
template <class Atomics>
void release(basic_sync_waiter<Atomics>& w) noexcept {
    (void)w.released.finish(); // never detached: the waiter always waits for its release
}

// A doubly linked FIFO of waiters, guarded by the primitive's lock.
template <class Waiter>
class basic_waiter_queue {
public:
    bool empty() const noexcept { return m_first == nullptr; }
    Waiter* front() const noexcept { return m_first; }

    void push_front(Waiter& w) noexcept {
        w.prev = nullptr;
        w.next = m_first;
        if (m_first != nullptr)
            m_first->prev = &w;
        else
            m_last = &w;
        m_first = &w;
    }

    void push_back(Waiter& w) noexcept {
        w.next = nullptr;
        w.prev = m_last;
        if (m_last != nullptr)
            m_last->next = &w;
        else
            m_first = &w;
        m_last = &w;
    }

    // Precondition: !empty().
    Waiter& pop_front() noexcept {
        Waiter& w = *m_first;
        unlink(w);
        return w;
    }

    // Precondition: w is in this queue.
    void unlink(Waiter& w) noexcept {
        (w.prev != nullptr ? w.prev->next : m_first) = w.next;
        (w.next != nullptr ? w.next->prev : m_last) = w.prev;
        w.next = w.prev = nullptr;
    }

    // Moves every waiter out, in order, leaving this queue empty (to release them after the lock
    // is dropped).
    basic_waiter_queue take_all() noexcept {
        basic_waiter_queue all = *this;
        m_first = m_last = nullptr;
        return all;
    }

    // take_all(), each outcome set (under the lock, as every outcome): for release_all().
    basic_waiter_queue take_all_marked(wait_outcome outcome) noexcept {
        basic_waiter_queue all = take_all();
        for (Waiter* w = all.front(); w != nullptr; w = w->next)
            w->outcome = outcome;
        return all;
    }

private:
    Waiter* m_first = nullptr;
    Waiter* m_last = nullptr;
};
using waiter_queue = basic_waiter_queue<sync_waiter>;

// Takes a timed-out waiter out of its primitive's queue. Called at the deadline from the timer
// thread, or from the waiting thread itself; it takes the primitive's lock and, if the waiter is
// still queued (outcome == queued), unlinks it, sets its outcome to timed_out (under the lock,
// like every outcome) and returns true: the primitive will then never release it, and the caller
// does. False when the primitive has already taken it out (and will release it, or has).
class sync_withdraw {
public:
    virtual bool withdraw(sync_waiter& w) noexcept = 0;

protected:
    ~sync_withdraw() = default;
};

// A sync_withdraw made of a callable (a primitive's member function body, as a lambda).
template <class F>
class withdraw_with final : public sync_withdraw {
public:
    explicit withdraw_with(F f) : m_f(std::move(f)) {}
    bool withdraw(sync_waiter& w) noexcept override { return m_f(w); }

private:
    F m_f;
};

// Releases every waiter of `all` (taken out under the lock, outcome written), in order, after
// the lock is dropped. Reads each one's link before releasing it: a released waiter may be gone.
template <class Waiter>
void release_all(basic_waiter_queue<Waiter> all) noexcept {
    for (Waiter* w = all.front(); w != nullptr;) {
        Waiter* const next = w->next;
        release(*w);
        w = next;
    }
}

// A primitive destroyed while a task or thread waits in its queue: the waiter's record would be
// left in freed memory. Prints the primitive's name to stderr and calls std::abort().
[[noreturn]] void report_destroyed_with_waiters(const char* primitive) noexcept;

// Waits until `w` is released. On a worker whose task may park, the task parks on a fiber and
// the worker runs other work; elsewhere (off the pool, a caller of a pool, parking off or
// refused) the thread blocks, and the rescue of blocked pools applies.
// `why` names the primitive in the statistics and the trace.
void wait_released(sync_waiter& w, park_reason why);
// The same, or until the deadline, when `withdraw` takes the waiter out of its queue; the
// outcome is then timed_out. Never returns before `w` is released or withdrawn.
void wait_released_until(sync_waiter& w, std::chrono::steady_clock::time_point deadline,
                         sync_withdraw& withdraw, park_reason why);

} // namespace fj::detail
