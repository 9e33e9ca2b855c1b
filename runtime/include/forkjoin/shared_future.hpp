// fj::shared_future<T>: a task's result that any number of copies may wait for and read, on any
// threads (std::shared_future's shape; made by future::share() or from a future&&).
//
//   fj::shared_future<int> answer = fj::async([] { return 42; }).share();
//   auto a = fj::async([answer] { return answer.get() + 1; });   // copies, read concurrently
//   auto b = fj::async([answer] { return answer.get() * 2; });
//
// - get() waits, then returns the value as const T& (T& for a reference, nothing for void), or
//   rethrows the task's exception: the same stored exception on every call, from every copy.
//   The value stays until the last copy is gone, so get() may be called again.
// - Waiting is fj::future's: inside a task on a worker the wait parks the task (or helps); off
//   the pool the thread blocks. wait_for()/wait_until() return std::future_status.
// - No cancel(): cancel the future before share() if needed; every get() then throws
//   fj::task_cancelled.
// - then(f) runs f(const T&) (f(T&), f()) as a task once ready; the shared_future stays valid.
// - Dropping every copy before the task finishes neither blocks nor cancels: the task still runs,
//   and its result is freed when it finishes.
// - Operations on an empty shared_future (default-constructed or moved from) other than valid(),
//   copying and assignment throw std::future_error(no_state).
// - As for std::shared_future: any number of threads may call the const members of one object at
//   once; a thread that assigns to or destroys an object needs the others to be done with it.
#pragma once

#include "detail/future_state.hpp"
#include "detail/observe.hpp"
#include "detail/shared_core.hpp"
#include "detail/steady_deadline.hpp"
#include "errors.hpp"
#include "future.hpp"

#include <chrono>
#include <future>
#include <type_traits>
#include <utility>

namespace fj {

namespace detail {
// What shared_future<T>::get() returns: const T&, T& for a reference, void.
template <class T>
struct shared_get {
    using type = const T&;
};
template <class T>
struct shared_get<T&> {
    using type = T&;
};
template <>
struct shared_get<void> {
    using type = void;
};
template <class T>
using shared_get_t = typename shared_get<T>::type;

// The type of shared_future::then(f)'s result: f(const T&), f(T&), or f() for void.
template <class T, class F>
struct shared_then_result {
    using type = std::invoke_result_t<std::decay_t<F>&, shared_get_t<T>>;
};
template <class F>
struct shared_then_result<void, F> {
    using type = std::invoke_result_t<std::decay_t<F>&>;
};
} // namespace detail

template <class T>
class shared_future {
public:
    using value_type = T;

    shared_future() noexcept = default;

    // Consumes f, as future::share(). Throws std::bad_alloc, leaving f as it was.
    shared_future(future<T>&& f); // NOLINT: implicit, like std::shared_future's

    shared_future(const shared_future& other) noexcept
        : m_core(other.m_core), m_state(other.m_state) {
        if (m_core != nullptr)
            detail::add_reference(*m_core);
    }
    shared_future(shared_future&& other) noexcept
        : m_core(std::exchange(other.m_core, nullptr)),
          m_state(std::exchange(other.m_state, nullptr)) {}
    shared_future& operator=(const shared_future& other) noexcept {
        // Take the new reference before dropping ours: other may be *this, or share our core.
        detail::shared_core* core = other.m_core;
        detail::future_state<T>* state = other.m_state;
        if (core != nullptr)
            detail::add_reference(*core);
        release();
        m_core = core;
        m_state = state;
        return *this;
    }
    shared_future& operator=(shared_future&& other) noexcept {
        if (this != &other) {
            release();
            m_core = std::exchange(other.m_core, nullptr);
            m_state = std::exchange(other.m_state, nullptr);
        }
        return *this;
    }
    // Never blocks: the last copy of an unfinished task's result leaves the freeing to the task.
    ~shared_future() { release(); }

    bool valid() const noexcept { return m_core != nullptr; }

    // The task finished (or was cancelled before share()); get() then returns without waiting.
    bool is_ready() const {
        check();
        return ready();
    }

    void wait() const {
        check();
        if (!ready())
            detail::wait_shared(*m_core);
        joined();
    }

    template <class Rep, class Period>
    std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
        return wait_until(std::chrono::steady_clock::now() + timeout);
    }

    template <class Clock, class Duration>
    std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
        check();
        if (!ready() && !detail::wait_shared_until(*m_core, detail::to_steady_deadline(deadline)))
            return std::future_status::timeout;
        return std::future_status::ready;
    }

    detail::shared_get_t<T> get() const {
        check();
        if (!ready()) [[unlikely]]
            detail::wait_shared(*m_core);
        if (m_state == nullptr)
            detail::rethrow_cancelled(*m_core);
        joined();
        return m_state->m_result.read();
    }

    template <class F>
    future<typename detail::shared_then_result<T, F>::type> then(F&& fn) const; // shared_then.hpp

private:
    // acquire: pairs with the release half of the task's finish(); after true the result may be
    // read. A cancelled future's core has no state and is ready from the start.
    bool ready() const noexcept { return m_state == nullptr || m_state->m_completion.is_done(); }

    void check() const {
        if (m_core == nullptr)
            detail::throw_no_state();
    }

    // The observers' join event, as future::get() and wait() (the first join takes the edge).
    void joined() const noexcept {
        if (m_state != nullptr && detail::observed()) [[unlikely]]
            detail::on_future_joined(m_state);
    }

    void release() noexcept {
        if (m_core != nullptr)
            detail::drop_reference(*std::exchange(m_core, nullptr));
        m_state = nullptr;
    }

    static void destroy_state(void* state) noexcept {
        static_cast<detail::future_state<T>*>(state)->destroy();
    }

    detail::shared_core* m_core = nullptr;
    // The future's state, read by every copy; owned by the core. Null with a core: the future was
    // cancelled before it was shared.
    detail::future_state<T>* m_state = nullptr;
};

template <class T>
shared_future<T>::shared_future(future<T>&& f) {
    detail::future_state<T>* s = detail::future_access::state(f);
    if (s == nullptr)
        return; // an empty future gives an empty shared_future, as std::future::share()
    if (s->m_completion.is_cancelled()) {
        // Only the future's owner (us) can cancel, so this cannot change under us. The task is
        // still queued: dropping the future detaches, and the skipped task frees the state.
        m_core = detail::make_cancelled_shared_core();
        future<T> dropped = std::move(f);
        return;
    }
    // The core now owns the state: registered on its completion, or ready if the task is done.
    m_core = detail::make_shared_core(s->m_completion, s, &destroy_state);
    m_state = detail::future_access::take(f);
}

template <class T>
shared_future<T> future<T>::share() {
    return shared_future<T>(std::move(*this));
}

} // namespace fj

#include "detail/shared_then.hpp"
