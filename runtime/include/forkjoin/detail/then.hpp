// future<T>::then(f): a continuation task that waits on the antecedent's completion as its one
// waiter. When the antecedent finishes, its finish() wakes the record, which queues the
// continuation on the scheduler that ran the antecedent (schedule_continuation). The continuation
// owns the antecedent's future and calls get() on it, so the value, an exception or a
// cancellation flows through without special cases. Nobody blocks.
//
// future.hpp includes this header and calls start_then() from future<T>::then(); future<T> is
// complete wherever these templates are instantiated.
#pragma once

#include "callable_check.hpp"
#include "future_access.hpp"
#include "future_state.hpp"
#include "invoke.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace fj::detail {

// The type of then(f)'s result: f(T&&), f(T&), or f() for void.
template <class T, class F>
struct then_result {
    using type = std::invoke_result_t<std::decay_t<F>&, T>;
};
template <class F>
struct then_result<void, F> {
    using type = std::invoke_result_t<std::decay_t<F>&>;
};

template <class T, class F>
class then_body {
public:
    then_body(future<T>&& antecedent, F&& fn)
        : m_antecedent(std::move(antecedent)), m_fn(std::move(fn)) {}
    then_body(future<T>&& antecedent, const F& fn)
        : m_antecedent(std::move(antecedent)), m_fn(fn) {}

    decltype(auto) operator()() {
        if constexpr (std::is_void_v<T>) {
            m_antecedent.get();
            return detail::invoke(m_fn);
        } else if constexpr (std::is_reference_v<T>) {
            return detail::invoke(m_fn, m_antecedent.get());
        } else {
            return detail::invoke(m_fn, m_antecedent.get()); // a prvalue: f takes it by value or &&
        }
    }

private:
    future<T> m_antecedent;
    F m_fn;
};

// The body of future<T>::then() once it has checked that the future is not empty; consumes
// `antecedent`.
template <class T, class F>
future<typename then_result<T, F>::type> start_then(future<T>& antecedent, F&& fn) {
    using R = typename then_result<T, F>::type;
    using body = then_body<T, std::decay_t<F>>;
    using task_type = fork_task<body, R, continuation_hook>;
    check_callable(fn);
    future_state<T>* state = future_access::state(antecedent); // lives as long as the body's future
    // The future is moved into the body only once the block is allocated: if that throws
    // (std::bad_alloc), the future is still valid.
    task_type* c = task_type::make(std::move(antecedent), std::forward<F>(fn));
    waiter* record = c;
    if (!state->m_completion.try_register(record)) { // already done or cancelled: start now
        // m_home is read only once done (published by finish()); a cancelled antecedent that
        // never ran has no home worth keeping.
        const std::uint64_t home = state->m_completion.is_done() ? state->m_home : 0;
        start_continuation_now(c, home);
    }
    // From here the continuation may run at any time; the block stays alive until our future
    // (created below) is released as well.
    return future_access::make<R>(c);
}

} // namespace fj::detail
