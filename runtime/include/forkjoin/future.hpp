// fj::future<T>: the result of a task started by fork(), submit() or async().
//
// - get() waits, then returns the value or rethrows the task's exception; the future is then empty.
// - wait()/get() on a worker run other tasks meanwhile; off the pool they block.
// - Dropping a future without get() neither blocks nor cancels: the task still runs, and an
//   exception it throws is discarded.
// - share() turns it into an fj::shared_future<T>: copyable, and read by any number of waiters.
// - cancel() stops a task that has not started: it then never runs, and get() throws
//   fj::task_cancelled. A task that has started is never interrupted (cancel() returns false).
// - then(f) returns the future of f(value), run once this future is ready, without blocking
//   anyone; an exception (or cancellation) skips f and propagates. It consumes this future.
// - get()/wait()/is_ready()/cancel()/then() on an empty future throw std::future_error(no_state).
#pragma once

#include "detail/future_access.hpp"
#include "detail/future_state.hpp"
#include "detail/observe.hpp"
#include "detail/shared_future_class.hpp"
#include "detail/steady_deadline.hpp"
#include "detail/then.hpp"
#include "detail/wait.hpp"
#include "errors.hpp"

#include <chrono>
#include <future>
#include <utility>

namespace fj {

template <class T>
class future {
public:
    using value_type = T;

    future() noexcept = default;
    future(future&& other) noexcept : m_state(std::exchange(other.m_state, nullptr)) {}
    future& operator=(future&& other) noexcept {
        if (this != &other) {
            release();
            m_state = std::exchange(other.m_state, nullptr);
        }
        return *this;
    }
    future(const future&) = delete;
    future& operator=(const future&) = delete;
    ~future() { release(); }

    bool valid() const noexcept { return m_state != nullptr; }

    bool is_ready() const {
        check();
        return m_state->m_completion.is_ready();
    }

    // True if the task had not started: it never will, and get() throws fj::task_cancelled.
    bool cancel() {
        check();
        return m_state->m_completion.cancel(m_state->m_start);
    }

    template <class F>
    future<typename detail::then_result<T, F>::type> then(F&& fn) {
        check();
        return detail::start_then(*this, std::forward<F>(fn));
    }

    // Consumes this future (it is empty afterwards, as after get()); any number of copies of the
    // result may then wait and read the value (shared_future.hpp). An empty future gives an empty
    // shared_future. Throws std::bad_alloc, leaving this future as it was.
    shared_future<T> share() { return shared_future<T>(std::move(*this)); }

    void wait() const {
        check();
        detail::wait(m_state->m_completion);
        joined();
    }

    template <class Rep, class Period>
    std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
        return wait_until(std::chrono::steady_clock::now() + timeout);
    }

    // Timed waits run on steady_clock; a deadline on another clock is converted once.
    template <class Clock, class Duration>
    std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
        check();
        return detail::wait_until(m_state->m_completion, detail::to_steady_deadline(deadline))
                   ? std::future_status::ready
                   : std::future_status::timeout;
    }

    // always_inline: the fast path (already done) is a few instructions, and fork/get costs are
    // the runtime's headline; the observers' hook must not push it out of line.
    [[gnu::always_inline]] inline T get() {
        check();
        if (!m_state->m_completion.is_done()) [[unlikely]] { // one load when the task is done
            if (detail::current_worker() == nullptr) [[unlikely]]
                return get_outside();
            wait_ready();
        }
        return take_done();
    }

private:
    friend struct detail::future_access;

    // get()'s wait: until done, or cancelled (then the exception).
    [[gnu::always_inline]] inline void wait_ready() {
        detail::wait(m_state->m_completion);
        if (m_state->m_completion.is_cancelled()) {
            release(); // the task is still queued: when it is skipped, it frees the state
            detail::throw_task_cancelled();
        }
    }

    // get()'s end once the task is done.
    [[gnu::always_inline]] inline T take_done() {
        joined();
        // The task is done and touches the state no more: it is ours alone to read and free.
        struct free_on_exit {
            detail::future_state<T>* state;
            ~free_on_exit() { state->destroy(); }
        } guard{std::exchange(m_state, nullptr)};
        return guard.state->m_result.take();
    }

    // get() outside every pool on a task not done: a task still queued runs here instead of
    // being waited for (docs/design/callers.md#take-over). Out of line, so a worker's get()
    // pays only the check of the thread.
    [[gnu::noinline]] T get_outside() {
        if (run_here_if_queued())
            return get_taken_over();
        wait_ready();
        return take_done();
    }

    bool run_here_if_queued() {
        detail::future_state<T>& s = *m_state;
        if (!s.may_run_here())
            return false;
        return detail::run_queued_here(s.m_home, s.m_completion, s.m_start,
                                       [&s]() noexcept { s.run_here(); });
    }

    // get() after run_here_if_queued(): the result is ours to read, but the queued record may
    // not have been skipped yet, so the state is released as a consumer releases it.
    T get_taken_over() {
        joined();
        struct release_on_exit {
            future& self;
            ~release_on_exit() { self.release(); }
        } guard{*this};
        return m_state->m_result.take();
    }

    // This future's task has been seen finished: the observers' join event (the profiler joins
    // the child's edge).
    void joined() const noexcept {
        if (detail::observed()) [[unlikely]]
            detail::on_future_joined(m_state);
    }

    explicit future(detail::future_state<T>* state) noexcept : m_state(state) {}

    void check() const {
        if (m_state == nullptr)
            detail::throw_no_state();
    }

    void release() noexcept {
        if (m_state == nullptr)
            return;
        detail::future_state<T>* s = std::exchange(m_state, nullptr);
        if (s->m_completion.is_done() || s->m_completion.detach())
            s->destroy();
    }

    detail::future_state<T>* m_state = nullptr;
};

} // namespace fj
