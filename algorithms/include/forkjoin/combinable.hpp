// fj::combinable<T>: a per-thread accumulator folded into one value at the end (oneTBB's
// combinable).
//
//   fj::combinable<long> count;                        // elements start as T(): 0
//   fj::parallel_for(0, n, [&](int i) { if (test(i)) ++count.local(); });
//   long total = count.combine(std::plus<>{});
//
// The same storage as fj::enumerable_thread_specific (<forkjoin/enumerable_thread_specific.hpp>),
// without iteration: local() is lock-free once the calling thread has its element, works on any
// thread, and is per THREAD. A task that waits (future::get, fj::join, task_group::wait,
// reschedule_until) may resume on another worker: call local() again after any wait, and never
// keep the reference across one (it stays valid, but then belongs to whatever runs on the old
// thread). combine(op) needs an associative, commutative op: the order of the elements is
// unspecified.
#pragma once

#include "enumerable_thread_specific.hpp"

#include <concepts>
#include <type_traits>
#include <utility>

namespace fj {

template <class T>
class combinable {
public:
    using value_type = T;

    // Elements start as T().
    combinable() requires std::default_initializable<T>
    = default;

    // Elements start as init(), called on the thread that first asks.
    template <class Init>
    requires std::invocable < const std::decay_t<Init>
    & > &&std::same_as<std::invoke_result_t<const std::decay_t<Init>&>, T> &&
        (!std::convertible_to<Init, T>)explicit combinable(Init&& init)
        : m_elements(std::forward<Init>(init)) {}

    combinable(const combinable&) = delete;
    combinable& operator=(const combinable&) = delete;

    // The calling thread's element; `exists` says whether it was there before this call.
    T& local() { return m_elements.local(); }
    T& local(bool& exists) { return m_elements.local(exists); }

    // op(op(e1, e2), e3)... over the elements; with none, a fresh element (T() or init()).
    template <class Op>
    requires std::convertible_to<std::invoke_result_t<Op&, const T&, const T&>, T> T combine(Op op)
    const { return m_elements.combine(std::move(op)); }

    // f(element) for every element.
    template <class F>
    requires std::invocable<F&, T&>
    void combine_each(F f) { m_elements.combine_each(std::move(f)); }

    // Destroys every element. Must not overlap any other call on this object.
    void clear() noexcept { m_elements.clear(); }

private:
    enumerable_thread_specific<T> m_elements;
};

} // namespace fj
