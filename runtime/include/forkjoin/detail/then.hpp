// future<T>::then(f): a continuation task that waits on the antecedent's completion as its one
// waiter. When the antecedent finishes, its finish() wakes the record, which queues the
// continuation on the scheduler that ran the antecedent (schedule_continuation). The continuation
// owns the antecedent's future and calls get() on it, so the value, an exception or a
// cancellation flows through without special cases. Nobody blocks.
#pragma once

#include "../future.hpp"
#include "callable_check.hpp"
#include "future_state.hpp"
#include "invoke.hpp"

#include <type_traits>
#include <utility>

namespace fj::detail {

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

} // namespace fj::detail

namespace fj {

template <class T>
template <class F>
future<typename detail::then_result<T, F>::type> future<T>::then(F&& fn) {
    using R = typename detail::then_result<T, F>::type;
    using body = detail::then_body<T, std::decay_t<F>>;
    using task_type = detail::fork_task<body, R, detail::continuation_hook>;
    check();
    detail::check_callable(fn);
    detail::future_state<T>* antecedent = m_state; // lives as long as the body's future
    // *this is moved into the body only once the block is allocated: if that throws
    // (std::bad_alloc), this future is still valid.
    task_type* c = task_type::make(std::move(*this), std::forward<F>(fn));
    detail::waiter* record = c;
    if (!antecedent->m_completion.try_register(record)) { // already done or cancelled: start now
        // m_home is read only once done (published by finish()); a cancelled antecedent that
        // never ran has no home worth keeping.
        const std::uint64_t home = antecedent->m_completion.is_done() ? antecedent->m_home : 0;
        detail::start_continuation_now(c, home);
    }
    // From here the continuation may run at any time; the block stays alive until our future
    // (created below) is released as well.
    return detail::future_access::make<R>(c);
}

} // namespace fj
