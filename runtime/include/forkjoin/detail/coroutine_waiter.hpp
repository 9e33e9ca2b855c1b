// The coroutine form of a wait on the task-parking primitives (<forkjoin/sync_await.hpp>;
// docs/design/sync.md#coroutines): the waiter record in the awaiter, i.e. the coroutine's frame,
// and the resumption queued by its release, as a future's co_await queues one.
#pragma once

#include "sync_waiter.hpp"
#include "task.hpp"

#include <coroutine>
#include <cstdint>
#include <new>

namespace fj::detail {

// A coroutine's wait (co_await on a primitive's *_async()), in its frame: `record` is queued as
// any waiter's, then this registers on record.released; the release's finish() calls wake(),
// which queues this as a task; running it resumes the coroutine, or first calls m_retry, which
// may wait again instead (false; the awaiter is not touched after that). docs/design/sync.md.
class alignas(16) coroutine_waiter : public task, public waiter {
public:
    coroutine_waiter() noexcept;
    coroutine_waiter(const coroutine_waiter&) = delete;
    // After `record` is queued: true if `h` waits for the release (the awaiter is not touched
    // after that), false if it was released meanwhile.
    bool suspend(std::coroutine_handle<> h) noexcept { return prepare(h), register_for_release(); }
    void prepare(std::coroutine_handle<> h) noexcept; // whom to resume; the pool it waits on
    bool register_for_release() noexcept { return record.released.try_register(this); }
    void rearm() noexcept { ::new (static_cast<void*>(&record)) sync_waiter(); } // trivial dtor
    sync_waiter record;

protected:
    bool (*m_retry)(coroutine_waiter&) noexcept = nullptr;

private:
    static void wake(waiter* w) noexcept;
    static void run(task* t) noexcept;
    std::coroutine_handle<> m_handle;
    std::uint64_t m_origin = 0; // the pool the coroutine waited on (0: none)
    std::uint64_t m_home = 0;
};

// co_await on latch, barrier, semaphore, sleep: `queue` (out of line) returns true if the
// coroutine may go on, else queues the record.
class queue_awaiter : public coroutine_waiter {
public:
    using queue_fn = bool (*)(void* primitive, std::uint64_t arg, sync_waiter& w);
    queue_awaiter(queue_fn queue, void* primitive, std::uint64_t arg = 0) noexcept
        : m_queue(queue), m_primitive(primitive), m_arg(arg) {}
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
        return !m_queue(m_primitive, m_arg, record) && suspend(h);
    }
    void await_resume() const noexcept {}

private:
    queue_fn m_queue;
    void* m_primitive;
    std::uint64_t m_arg;
};

} // namespace fj::detail
