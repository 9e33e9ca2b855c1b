// fj::parallel_for and fj::parallel_for_each: loops whose iterations may run in parallel.
//
//   fj::parallel_for(0, v.size(), [&](std::size_t i) { v[i] = f(i); });
//   fj::parallel_for(0, n, 2, body);                        // 0, 2, 4, ... below n
//   fj::parallel_for(0, n, body, fj::grain{1024});           // chunks of at most 1024
//   fj::parallel_for(0, n, body, stop_source.get_token());  // stoppable (see below)
//   fj::parallel_for(fj::blocked_range<int>{0, n}, [&](fj::blocked_range<int> r) { ... });
//   fj::parallel_for_each(v.begin(), v.end(), [](auto& x) { x *= 2; });
//   fj::parallel_for_each(list.begin(), list.end(), [](node* n, fj::feeder<node*>& more) {
//       for (node* c : n->children) more.add(c);            // input/forward iterators, a feeder
//   });
//
// Each form also takes a fj::scheduler& first; without it the current scheduler runs the loop.
// The index type is the common type of first and last. Splitting is recursive fork/join, adaptive
// unless a grain is given (detail/loop_driver.hpp). Every call returns after every body it started
// has finished. Empty ranges call nothing; a reversed range, a non-positive step or a zero grain
// throws std::invalid_argument.
//
// Trailing options, in either order, each at most once: fj::grain (not for blocked ranges, whose
// grain is part of the range) and std::stop_token. A stop request made before the call returns
// keeps every chunk that has not started from starting; bodies already running finish (they can
// poll the token themselves), and the call then throws fj::operation_cancelled. A normal return
// means every iteration ran.
//
// Exceptions: a body that throws cancels the bodies above it that have not started; bodies below
// it still run. The exception rethrown is the lowest-index one, as in a serial loop (for blocked
// ranges: from the lowest chunk that threw). A body's exception outranks a stop request. The task
// form of parallel_for_each (input or forward iterators, or a feeder) rethrows the first exception
// in time, as fj::task_group does, and skips the items not started.
#pragma once

#include "blocked_range.hpp"
#include "detail/for_each_tasks.hpp"
#include "detail/index_space.hpp"
#include "detail/loop_driver.hpp"
#include "detail/loop_options.hpp"
#include "detail/range_driver.hpp"
#include "feeder.hpp"
#include "grain.hpp"
#include "range.hpp"

#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <stop_token>
#include <type_traits>

#include <forkjoin/async.hpp>
#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {

template <std::integral Index, class Body>
void parallel_for_indices(scheduler& sched, const index_space<Index>& space,
                          const loop_options& options, Body& body) {
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
    run_loop("fj::parallel_for", sched, space.count, options, leaf);
}

template <class Value, class Body>
void parallel_for_blocks(scheduler& sched, const blocked_range<Value>& range, loop_options options,
                         Body& body) {
    ext::check_callable(body);
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) {
        try {
            blocked_range<Value> piece(range.at(lo), range.at(hi));
            ext::invoke(body, piece); // an lvalue: bodies may take R, const R& or R&
        } catch (...) {
            failure.record(lo, std::current_exception());
        }
    };
    options.grain = range.grain();
    run_loop("fj::parallel_for", sched, range.size(), options, leaf);
}

template <class Range, class Body>
void parallel_for_range(scheduler& sched, const Range& range, const loop_options& options,
                        Body& body) {
    ext::check_callable(body);
    loop_failure failure;
    auto work = [&] {
        if (options.kind == partition::affinity) {
            range_pieces<Range> plan(range, sched.worker_count());
            auto run_piece = [&](std::size_t i) {
                if (plan.keys[i] >= failure.limit())
                    return;
                try {
                    if (!plan.pieces[i].empty())
                        ext::invoke(body, plan.pieces[i]);
                } catch (...) {
                    failure.record(plan.keys[i], std::current_exception());
                }
            };
            run_with_affinity(sched, *options.affinity, plan.pieces.size(), run_piece);
        } else {
            range_splitter<Range> splitter(sched, failure, split_rule_for(options.kind, range));
            Range whole(range);
            for_range(splitter, whole, body, 0, 0);
        }
        return true;
    };
    run_tracked("fj::parallel_for", sched, options.stop, failure, false, false, work);
}

template <std::random_access_iterator It, class Fn>
void parallel_for_each_impl(scheduler& sched, It first, It last, const loop_options& options,
                            Fn& fn) {
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
    run_loop("fj::parallel_for_each", sched, n, options, leaf);
}

// A range carries its grain; a separate fj::grain would be ambiguous.
template <class... Opts>
inline constexpr bool no_grain_option = count_of<grain, Opts...> == 0;

template <class Body, class Range>
inline constexpr bool range_body = std::invocable<Body&, Range&>;

} // namespace detail

// --- parallel_for over indices -------------------------------------------------------------------

template <std::integral A, std::integral B, class Body, detail::loop_option... Opts>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(scheduler& sched, A first, B last, Body&& body, Opts&&... options) {
    using Index = detail::loop_index_t<A, B>;
    detail::parallel_for_indices(sched,
                                 detail::make_index_space<Index>("fj::parallel_for", first, last),
                                 detail::make_loop_options(std::forward<Opts>(options)...), body);
}

template <std::integral A, std::integral B, std::integral Step, class Body,
          detail::loop_option... Opts>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(scheduler& sched, A first, B last, Step step, Body&& body, Opts&&... options) {
    using Index = detail::loop_index_t<A, B>;
    detail::parallel_for_indices(
        sched, detail::make_index_space<Index>("fj::parallel_for", first, last, step),
        detail::make_loop_options(std::forward<Opts>(options)...), body);
}

template <std::integral A, std::integral B, class Body, detail::loop_option... Opts>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(A first, B last, Body&& body, Opts&&... options) {
    parallel_for(current_scheduler(), first, last, body, std::forward<Opts>(options)...);
}

template <std::integral A, std::integral B, std::integral Step, class Body,
          detail::loop_option... Opts>
requires std::invocable<Body&, detail::loop_index_t<A, B>>
void parallel_for(A first, B last, Step step, Body&& body, Opts&&... options) {
    parallel_for(current_scheduler(), first, last, step, body, std::forward<Opts>(options)...);
}

// --- parallel_for over a range (blocked_range, blocked_range2d/3d, or a user's) ----------------

template <splittable_range Range, class Body, detail::loop_option... Opts>
void parallel_for(scheduler& sched, const Range& range, Body&& body, Opts&&... options) {
    static_assert(detail::range_body<Body, Range>,
                  "fj::parallel_for(range, body): body must be callable with the range, as "
                  "body(r) for a parameter of type R, const R& or R& where R is the range's type");
    static_assert(detail::no_grain_option<Opts...>,
                  "fj::parallel_for: a range carries its own grain; write "
                  "fj::blocked_range<T>{begin, end, grain} instead of passing fj::grain");
    const detail::loop_options o = detail::make_loop_options(std::forward<Opts>(options)...);
    if constexpr (detail::is_blocked_range<Range>)
        detail::parallel_for_blocks(sched, range, o, body);
    else
        detail::parallel_for_range(sched, range, o, body);
}

template <splittable_range Range, class Body, detail::loop_option... Opts>
void parallel_for(const Range& range, Body&& body, Opts&&... options) {
    parallel_for(current_scheduler(), range, body, std::forward<Opts>(options)...);
}

// --- parallel_for_each --------------------------------------------------------------------------
// Random-access iterators with fn(item): cut at offsets like the index loops. Input and forward
// iterators, or fn(item, fj::feeder<T>&): a task per item (detail/for_each_tasks.hpp).

template <std::input_iterator It, class Fn, detail::loop_option... Opts>
void parallel_for_each(scheduler& sched, It first, It last, Fn&& fn, Opts&&... options) {
    constexpr bool with_feeder = detail::wants_feeder<Fn, It>;
    static_assert(with_feeder || std::invocable<Fn&, std::iter_reference_t<It>>,
                  "fj::parallel_for_each: fn must be callable as fn(*it), or as fn(*it, feeder) "
                  "with a fj::feeder<T>& for T the iterator's value type");
    const detail::loop_options o = detail::make_loop_options(std::forward<Opts>(options)...);
    if constexpr (std::random_access_iterator<It> && !with_feeder) {
        detail::parallel_for_each_impl(sched, first, last, o, fn);
    } else {
        static_assert(
            detail::no_grain_option<Opts...> && detail::partitioner_count<Opts...> == 0,
            "fj::parallel_for_each: fj::grain applies to random-access iterators without a "
            "feeder, and so do the partitioners; these items run as a task each");
        if constexpr (std::random_access_iterator<It>)
            (void)detail::iterator_distance("fj::parallel_for_each", first, last);
        detail::parallel_for_each_tasks(sched, std::move(first), std::move(last), o.stop, fn);
    }
}

template <std::input_iterator It, class Fn, detail::loop_option... Opts>
void parallel_for_each(It first, It last, Fn&& fn, Opts&&... options) {
    parallel_for_each(current_scheduler(), std::move(first), std::move(last), fn,
                      std::forward<Opts>(options)...);
}

} // namespace fj
