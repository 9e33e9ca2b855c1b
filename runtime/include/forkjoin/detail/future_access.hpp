// future_access: the friend of future<T> and shared_future<T> that lets the composition code
// (then, when_all, when_any, share) reach their states. Its members are templates over the
// future's type, so the classes need only be declared here: the continuation headers use it before
// future.hpp defines future<T>, and neither has to include the other.
#pragma once

#include "future_state.hpp"
#include "shared_core.hpp"

#include <utility>

namespace fj {

template <class T>
class future;
template <class T>
class shared_future;

namespace detail {

struct future_access {
    template <class T>
    static future_state<T>* state(const future<T>& f) noexcept {
        return f.m_state;
    }
    // Takes the state out of f without giving up the interest in it: the caller now owns it.
    template <class T>
    static future_state<T>* take(future<T>& f) noexcept {
        return std::exchange(f.m_state, nullptr);
    }
    template <class T>
    static future<T> make(future_state<T>* s) noexcept {
        return future<T>(s);
    }
    // The core all copies of f share (null for an empty one).
    template <class T>
    static shared_core* core(const shared_future<T>& f) noexcept {
        return f.m_core;
    }
};

} // namespace detail

} // namespace fj
