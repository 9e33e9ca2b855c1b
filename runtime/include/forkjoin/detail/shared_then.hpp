// shared_future<T>::then(f): a continuation task that listens on the shared core like a waiter.
// Its body holds a copy of the shared_future; the broadcast (on the thread that finished the
// antecedent) wakes the continuation's record, which queues it there, as future::then's does
// (schedule_continuation). Once running, the body's get() returns at once: the value, an
// exception or a cancellation flows through. Nobody blocks, and the shared_future stays valid.
//
// shared_future_class.hpp includes this header and calls start_shared_then() from
// shared_future<T>::then(); both future<T> and shared_future<T> are complete wherever these
// templates are instantiated.
#pragma once

#include "callable_check.hpp"
#include "future_access.hpp"
#include "future_state.hpp"
#include "invoke.hpp"
#include "shared_core.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace fj::detail {

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

// The body of shared_future<T>::then() once it has checked that the shared_future is not empty:
// `core` and `state` are the antecedent's (state null if it was cancelled before share()).
template <class T, class F>
future<typename shared_then_result<T, F>::type>
start_shared_then(const shared_future<T>& antecedent, shared_core& core, future_state<T>* state,
                  F&& fn) {
    using R = typename shared_then_result<T, F>::type;
    using body = shared_then_body<T, std::decay_t<F>>;
    using task_type = fork_task<body, R, shared_listener>;
    check_callable(fn);
    task_type* c =
        task_type::make(antecedent, std::forward<F>(fn)); // std::bad_alloc: nothing changed
    shared_listener& record = *c;
    if (!try_listen(core, record)) { // ready: start it now
        // m_home is read only once done (the broadcast's lock, or the acquire that found the
        // task done when the core was made, ordered finish() before us); a future cancelled
        // before share() never ran and has no home worth keeping.
        const std::uint64_t home = state != nullptr ? state->m_home : 0;
        start_continuation_now(c, home);
    }
    // From here the continuation may run at any time; its block stays alive until the future
    // made below is released as well.
    return future_access::make<R>(c);
}

} // namespace fj::detail
