// shared_future<T>::then(f): a continuation task that listens on the shared core like a waiter.
// Its body holds a copy of the shared_future; the broadcast (on the thread that finished the
// antecedent) wakes the continuation's record, which queues it there, as future::then's does
// (schedule_continuation). Once running, the body's get() returns at once: the value, an
// exception or a cancellation flows through. Nobody blocks, and the shared_future stays valid.
#pragma once

#include "../future.hpp"
#include "../shared_future.hpp"
#include "callable_check.hpp"
#include "future_state.hpp"
#include "invoke.hpp"
#include "shared_core.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace fj::detail {

template <class T, class F>
class shared_then_body {
public:
    shared_then_body(const shared_future<T>& antecedent, F&& fn)
        : m_antecedent(antecedent), m_fn(std::move(fn)) {}
    shared_then_body(const shared_future<T>& antecedent, const F& fn)
        : m_antecedent(antecedent), m_fn(fn) {}

    decltype(auto) operator()() {
        if constexpr (std::is_void_v<T>) {
            m_antecedent.get();
            return detail::invoke(m_fn);
        } else {
            return detail::invoke(m_fn, m_antecedent.get()); // const T& (T& for a reference)
        }
    }

private:
    shared_future<T> m_antecedent;
    F m_fn;
};

} // namespace fj::detail

namespace fj {

template <class T>
template <class F>
future<typename detail::shared_then_result<T, F>::type> shared_future<T>::then(F&& fn) const {
    using R = typename detail::shared_then_result<T, F>::type;
    using body = detail::shared_then_body<T, std::decay_t<F>>;
    using task_type = detail::fork_task<body, R, detail::shared_listener>;
    check();
    detail::check_callable(fn);
    task_type* c = task_type::make(*this, std::forward<F>(fn)); // std::bad_alloc: nothing changed
    detail::shared_listener& record = *c;
    if (!detail::try_listen(*m_core, record)) { // ready: start it now
        // m_home is read only once done (the broadcast's lock, or the acquire that found the
        // task done when the core was made, ordered finish() before us); a future cancelled
        // before share() never ran and has no home worth keeping.
        const std::uint64_t home = m_state != nullptr ? m_state->m_home : 0;
        detail::start_continuation_now(c, home);
    }
    // From here the continuation may run at any time; its block stays alive until the future
    // made below is released as well.
    return detail::future_access::make<R>(c);
}

} // namespace fj
