// What `co_await` on an fj::future or fj::shared_future suspends on (forkjoin/await.hpp;
// docs/design/coroutines.md).
//
// The awaiter lives in the awaiting coroutine's frame while it is suspended. It is the future's
// one waiter (a shared future's listener) and, once woken, a task: the wake-up queues it exactly
// as a then() continuation is queued (schedule_continuation: on the deque of the worker that
// completed the future, else in its pool's injection queue; a future completed outside every pool
// resumes on the default scheduler), and running it resumes the coroutine. The resumed coroutine
// may destroy the awaiter: resuming is the task's last touch of it.
#pragma once

#include "future_access.hpp"
#include "future_state.hpp"
#include "shared_core.hpp"
#include "task.hpp"

#include <coroutine>
#include <cstdint>

namespace fj::detail {

// The part that does not depend on the future's type. Record: the waiter record the awaited
// side wakes, `waiter` for a future's completion, `shared_listener` for a shared future's core.
template <class Record>
class alignas(16) resumption : public task, public Record {
protected:
    resumption() noexcept {
        this->m_run = &run;
        this->m_wake = &wake;
    }

    std::coroutine_handle<> m_handle;
    std::uint64_t m_home = 0;

private:
    static void wake(waiter* w) noexcept {
        auto* self = static_cast<resumption*>(static_cast<Record*>(w));
        schedule_continuation(static_cast<task*>(self), self->m_home);
    }
    static void run(task* t) noexcept {
        // Last touch: the coroutine may end and free its frame, and with it this awaiter. An
        // exception that leaves resume() means the coroutine's promise rethrows from
        // unhandled_exception(); it has no caller to reach here, so it terminates.
        static_cast<resumption*>(t)->m_handle.resume();
    }
};

template <class T>
class future_awaiter final : public resumption<waiter> {
public:
    explicit future_awaiter(future<T>& f) noexcept : m_future(f) {}

    // Throws std::future_error(no_state) for an empty future, as get() would.
    bool await_ready() const { return m_future.is_ready(); }

    // False: ready meanwhile (done or cancelled), so the coroutine goes on at once.
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        m_handle = h;
        return future_access::state(m_future)->m_completion.try_register(this);
    }

    // The value, or the task's exception (fj::task_cancelled for a cancelled one), as get().
    T await_resume() { return m_future.get(); }

private:
    future<T>& m_future;
};

template <class T>
class shared_future_awaiter final : public resumption<shared_listener> {
public:
    explicit shared_future_awaiter(const shared_future<T>& f) noexcept : m_future(f) {}

    bool await_ready() const { return m_future.is_ready(); }

    bool await_suspend(std::coroutine_handle<> h) noexcept {
        m_handle = h;
        return try_listen(*future_access::core(m_future), *this);
    }

    decltype(auto) await_resume() const { return m_future.get(); }

private:
    const shared_future<T>& m_future;
};

} // namespace fj::detail
