// The class fj::shared_future<T> (documented in shared_future.hpp). future.hpp includes it for
// future<T>::share(), and shared_future.hpp for the public name; future<T> is declared here and
// complete wherever these templates are instantiated.
#pragma once

#include "../errors.hpp"
#include "future_access.hpp"
#include "future_state.hpp"
#include "observe.hpp"
#include "shared_core.hpp"
#include "shared_then.hpp"
#include "steady_deadline.hpp"

#include <chrono>
#include <future>
#include <utility>

namespace fj {

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
    future<typename detail::shared_then_result<T, F>::type> then(F&& fn) const {
        check();
        return detail::start_shared_then(*this, *m_core, m_state, std::forward<F>(fn));
    }

private:
    friend struct detail::future_access;

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

} // namespace fj
