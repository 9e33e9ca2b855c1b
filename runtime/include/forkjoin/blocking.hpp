// fj::blocking(f, args...): runs f(args...) on the calling thread, declared as a call that blocks
// (file or socket I/O, a lock held outside the pool, a wait on something that is not an
// fj::future), and returns its result or rethrows its exception.
//
// On a worker of a pool whose rescue is on (scheduler_options::max_spare_workers > 0) the pool
// starts a spare worker at once, unless one of its workers is idle, so the pool's queued work
// keeps running while this thread waits; the spare retires at its first task boundary after f
// returns. The calling task keeps its worker, its deque (thieves may take its queued children)
// and its thread. Off every pool, or with the rescue off, it simply calls f.
//
// Blocking calls that are not declared are found too, a little later (docs/tutorial-async.md
// #blocking): fj::blocking is for code that knows it will block and wants no delay.
// An empty callable (null function pointer, empty std::function) throws std::invalid_argument
// before anything else happens.
#pragma once

#include "detail/callable_check.hpp"
#include "detail/invoke.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace fj {

namespace detail {

struct pool_core;

// The declaration around one fj::blocking call (blocking.cpp).
class blocking_scope {
public:
    blocking_scope() noexcept;
    ~blocking_scope();
    blocking_scope(const blocking_scope&) = delete;
    blocking_scope& operator=(const blocking_scope&) = delete;

private:
    pool_core* m_pool = nullptr; // null: nothing declared (off the pool, or no rescue)
    std::size_t m_slot = 0;      // the worker slot the calling thread served at the start
    std::size_t m_spare = 0;     // the spare started for it, with which start of that slot
    std::uint64_t m_spare_start = 0;
};

} // namespace detail

template <class F, class... Args>
decltype(auto) blocking(F&& f, Args&&... args) {
    detail::check_callable(f);
    const detail::blocking_scope scope;
    return detail::invoke(std::forward<F>(f), std::forward<Args>(args)...);
}

} // namespace fj
