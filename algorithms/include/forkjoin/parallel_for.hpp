// fj::parallel_for and fj::parallel_for_each: loops whose iterations may run in parallel.
//
//   fj::parallel_for(0, v.size(), [&](std::size_t i) { v[i] = f(i); });
//   fj::parallel_for(0, n, 2, body);                        // 0, 2, 4, ... below n
//   fj::parallel_for(0, n, body, fj::grain{1024});           // chunks of at most 1024
//   fj::parallel_for(fj::blocked_range<int>{0, n}, [&](fj::blocked_range<int> r) { ... });
//   fj::parallel_for_each(v.begin(), v.end(), [](auto& x) { x *= 2; });
//
// Each form also takes a fj::scheduler& first; without it the current scheduler runs the loop.
// The index type is the common type of first and last. Splitting is recursive fork/join, adaptive
// unless a grain is given (detail/loop_driver.hpp). Every call returns after every body it started
// has finished. Empty ranges call nothing; a reversed range, a non-positive step or a zero grain
// throws std::invalid_argument.
//
// Exceptions: a body that throws cancels the bodies above it that have not started; bodies below
// it still run. The exception rethrown is the lowest-index one, as in a serial loop (for blocked
// ranges: from the lowest chunk that threw).
#pragma once

#include "blocked_range.hpp"
#include "detail/index_space.hpp"
#include "detail/loop_driver.hpp"
#include "grain.hpp"

#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <type_traits>

#include <forkjoin/async.hpp>
#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {

template <std::integral Index, class Body>
void parallel_for_indices(scheduler& sched, const index_space<Index>& space, std::size_t grain,
                          Body& body) {
    ext::check_callable(body);
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) {
        std::size_t k = lo;
        try {
            if (space.step == 1) { // the common case, kept simple enough to vectorise
                using U = std::make_unsigned_t<Index>;
                const U first = static_cast<U>(space.first);
                for (; k < hi; ++k)
                    ext::invoke(body, static_cast<Index>(first + static_cast<U>(k)));
            } else {
                for (; k < hi; ++k)
                    ext::invoke(body, space.at(k));
            }
        } catch (...) {
            failure.record(k, std::current_exception());
        }
    };
    run_loop(sched, space.count, grain, leaf);
}

template <std::integral Index, class Body>
void parallel_for_blocks(scheduler& sched, const blocked_range<Index>& range, Body& body) {
    ext::check_callable(body);
    using U = std::make_unsigned_t<Index>;
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) {
        const auto at = [&](std::size_t k) {
            return static_cast<Index>(static_cast<U>(range.begin()) + static_cast<U>(k));
        };
        try {
            ext::invoke(body, blocked_range<Index>(at(lo), at(hi)));
        } catch (...) {
            failure.record(lo, std::current_exception());
        }
    };
    run_loop(sched, range.size(), range.grain(), leaf);
}

template <std::random_access_iterator It, class Fn>
void parallel_for_each_impl(scheduler& sched, It first, It last, std::size_t grain, Fn& fn) {
    const std::size_t n = iterator_distance("fj::parallel_for_each", first, last);
    ext::check_callable(fn);
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) {
        std::size_t k = lo;
        try {
            It it = first + static_cast<std::iter_difference_t<It>>(lo);
            for (; k < hi; ++k, ++it)
                ext::invoke(fn, *it);
        } catch (...) {
            failure.record(k, std::current_exception());
        }
    };
    run_loop(sched, n, grain, leaf);
}

} // namespace detail

// --- parallel_for over indices -------------------------------------------------------------------

template <std::integral A, std::integral B, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(scheduler& sched, A first, B last, Body&& body) {
    using Index = detail::loop_index_t<A, B>;
    detail::parallel_for_indices(
        sched, detail::make_index_space<Index>("fj::parallel_for", first, last), 0, body);
}

template <std::integral A, std::integral B, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(scheduler& sched, A first, B last, Body&& body, grain g) {
    using Index = detail::loop_index_t<A, B>;
    detail::parallel_for_indices(
        sched, detail::make_index_space<Index>("fj::parallel_for", first, last), g.value, body);
}

template <std::integral A, std::integral B, std::integral Step, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(scheduler& sched, A first, B last, Step step, Body&& body) {
    using Index = detail::loop_index_t<A, B>;
    detail::parallel_for_indices(
        sched, detail::make_index_space<Index>("fj::parallel_for", first, last, step), 0, body);
}

template <std::integral A, std::integral B, std::integral Step, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(scheduler& sched, A first, B last, Step step, Body&& body, grain g) {
    using Index = detail::loop_index_t<A, B>;
    detail::parallel_for_indices(
        sched, detail::make_index_space<Index>("fj::parallel_for", first, last, step), g.value,
        body);
}

template <std::integral A, std::integral B, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(A first, B last, Body&& body) {
    parallel_for(current_scheduler(), first, last, body);
}

template <std::integral A, std::integral B, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(A first, B last, Body&& body, grain g) {
    parallel_for(current_scheduler(), first, last, body, g);
}

template <std::integral A, std::integral B, std::integral Step, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(A first, B last, Step step, Body&& body) {
    parallel_for(current_scheduler(), first, last, step, body);
}

template <std::integral A, std::integral B, std::integral Step, class Body>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(A first, B last, Step step, Body&& body, grain g) {
    parallel_for(current_scheduler(), first, last, step, body, g);
}

// --- parallel_for over a blocked range -----------------------------------------------------------

template <std::integral Index, class Body>
requires std::invocable<Body&, blocked_range<Index>>
void parallel_for(scheduler& sched, const blocked_range<Index>& range, Body&& body) {
    detail::parallel_for_blocks(sched, range, body);
}

template <std::integral Index, class Body>
requires std::invocable<Body&, blocked_range<Index>>
void parallel_for(const blocked_range<Index>& range, Body&& body) {
    detail::parallel_for_blocks(current_scheduler(), range, body);
}

// --- parallel_for_each over random-access iterators ----------------------------------------------

template <std::random_access_iterator It, class Fn>
requires std::invocable<Fn&, std::iter_reference_t<It>>
void parallel_for_each(scheduler& sched, It first, It last, Fn&& fn) {
    detail::parallel_for_each_impl(sched, first, last, 0, fn);
}

template <std::random_access_iterator It, class Fn>
requires std::invocable<Fn&, std::iter_reference_t<It>>
void parallel_for_each(scheduler& sched, It first, It last, Fn&& fn, grain g) {
    detail::parallel_for_each_impl(sched, first, last, g.value, fn);
}

template <std::random_access_iterator It, class Fn>
requires std::invocable<Fn&, std::iter_reference_t<It>>
void parallel_for_each(It first, It last, Fn&& fn) {
    detail::parallel_for_each_impl(current_scheduler(), first, last, 0, fn);
}

template <std::random_access_iterator It, class Fn>
requires std::invocable<Fn&, std::iter_reference_t<It>>
void parallel_for_each(It first, It last, Fn&& fn, grain g) {
    detail::parallel_for_each_impl(current_scheduler(), first, last, g.value, fn);
}

} // namespace fj
