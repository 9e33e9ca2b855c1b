// fj::parallel_reduce: a deterministic parallel reduction, in the STL's style (identity, map,
// reduce).
//
//   double s = fj::parallel_reduce(0, n, 0.0, [](std::size_t k) { return term(k); },
//                                  std::plus<>{});
//   auto m = fj::parallel_reduce(v.begin(), v.end(), 0, [](int x) { return x; }, max_fn);
//   double t = fj::parallel_reduce(fj::blocked_range<std::size_t>{0, n}, 0.0,
//                                  [](fj::blocked_range<std::size_t> r, double acc) {
//                                      for (auto k = r.begin(); k != r.end(); ++k) acc += f(k);
//                                      return acc;
//                                  }, std::plus<>{});
//
// The result type is the identity's (decayed) type: pass 0.0, not 0, to sum doubles.
// Deterministic: the same bits for any worker count and steal pattern, and the serial order's
// result for an associative, non-commutative reduce whose identity is a true identity
// (detail/reduce_tree.hpp). The default grain depends on the range's size only; fj::grain or a
// blocked_range's grain overrides it. Each form also takes a fj::scheduler& first.
// Trailing options as parallel_for's: fj::grain (not for blocked ranges) and std::stop_token; a
// stop request made before the call returns ends it with fj::operation_cancelled (no result).
// Exceptions: as parallel_for (the lowest-index failure wins, later chunks are cancelled).
#pragma once

#include "blocked_range.hpp"
#include "detail/index_space.hpp"
#include "detail/loop_options.hpp"
#include "detail/range_driver.hpp"
#include "detail/reduce_tree.hpp"
#include "grain.hpp"
#include "range.hpp"

#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {

template <class T, class Reduce, class Value>
concept reduces_with = std::convertible_to<std::invoke_result_t<Reduce&, T, Value>, T> &&
    std::convertible_to<std::invoke_result_t<Reduce&, T, T>, T>;

template <std::integral Index, class T, class Map, class Reduce>
T parallel_reduce_indices(scheduler& sched, const index_space<Index>& space,
                          const loop_options& options, const T& identity, Map& map,
                          Reduce& reduce) {
    ext::check_callable(map);
    ext::check_callable(reduce);
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) -> T {
        T acc = identity;
        std::size_t k = lo;
        try {
            for (; k < hi; ++k)
                acc = ext::invoke(reduce, std::move(acc), ext::invoke(map, space.at(k)));
        } catch (...) {
            failure.record(k, std::current_exception());
        }
        return acc;
    };
    return run_reduce("fj::parallel_reduce", sched, space.count, options.grain, options.stop,
                      identity, leaf, reduce);
}

template <class Value, class T, class Chunk, class Reduce>
T parallel_reduce_blocks(scheduler& sched, const blocked_range<Value>& range,
                         const std::stop_token& stop, const T& identity, Chunk& chunk,
                         Reduce& reduce) {
    ext::check_callable(chunk);
    ext::check_callable(reduce);
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) -> T {
        try {
            blocked_range<Value> piece(range.at(lo), range.at(hi));
            return ext::invoke(chunk, piece, T(identity));
        } catch (...) {
            failure.record(lo, std::current_exception());
            return identity;
        }
    };
    return run_reduce("fj::parallel_reduce", sched, range.size(), range.grain(), stop, identity,
                      leaf, reduce);
}

template <class Range, class T, class Chunk, class Reduce>
T parallel_reduce_range(scheduler& sched, const Range& range, const std::stop_token& stop,
                        const T& identity, Chunk& chunk, Reduce& reduce) {
    ext::check_callable(chunk);
    ext::check_callable(reduce);
    loop_failure failure;
    range_reduce_tree<T, Range, Chunk, Reduce> tree(sched, identity, chunk, reduce, failure);
    auto work = [&]() -> T {
        Range whole(range);
        return tree.run(whole, 0, 0);
    };
    return run_tracked("fj::parallel_reduce", sched, stop, failure, false, identity, work);
}

template <class Range, class Body>
void parallel_reduce_body(scheduler& sched, const Range& range, const std::stop_token& stop,
                          Body& body) {
    loop_failure failure;
    range_splitter<Range> splitter(sched, failure);
    auto work = [&] {
        Range whole(range);
        reduce_range(splitter, whole, body, 0, 0);
        return true;
    };
    run_tracked("fj::parallel_reduce", sched, stop, failure, false, false, work);
}

template <class Chunk, class Range, class T>
inline constexpr bool range_chunk = std::invocable<Chunk&, Range&, T>;

template <std::random_access_iterator It, class T, class Map, class Reduce>
T parallel_reduce_iterators(scheduler& sched, It first, It last, const loop_options& options,
                            const T& identity, Map& map, Reduce& reduce) {
    const std::size_t n = iterator_distance("fj::parallel_reduce", first, last);
    ext::check_callable(map);
    ext::check_callable(reduce);
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) -> T {
        T acc = identity;
        std::size_t k = lo;
        try {
            It it = first + static_cast<std::iter_difference_t<It>>(lo);
            for (; k < hi; ++k, ++it)
                acc = ext::invoke(reduce, std::move(acc), ext::invoke(map, *it));
        } catch (...) {
            failure.record(k, std::current_exception());
        }
        return acc;
    };
    return run_reduce("fj::parallel_reduce", sched, n, options.grain, options.stop, identity, leaf,
                      reduce);
}

} // namespace detail

// --- over indices --------------------------------------------------------------------------------

template <std::integral A, std::integral B, class T, class Map, class Reduce,
          detail::loop_option... Opts>
requires std::invocable<Map&, detail::loop_index_t<A, B>> &&
    detail::reduces_with<std::decay_t<T>, Reduce,
                         std::invoke_result_t<Map&, detail::loop_index_t<A, B>>>
        std::decay_t<T> parallel_reduce(scheduler& sched, A first, B last, T&& identity, Map&& map,
                                        Reduce&& reduce, Opts&&... options) {
    using Index = detail::loop_index_t<A, B>;
    const std::decay_t<T> id(std::forward<T>(identity));
    return detail::parallel_reduce_indices(
        sched, detail::make_index_space<Index>("fj::parallel_reduce", first, last),
        detail::make_loop_options(std::forward<Opts>(options)...), id, map, reduce);
}

template <std::integral A, std::integral B, class T, class Map, class Reduce,
          detail::loop_option... Opts>
requires std::invocable<Map&, detail::loop_index_t<A, B>> &&
    detail::reduces_with<std::decay_t<T>, Reduce,
                         std::invoke_result_t<Map&, detail::loop_index_t<A, B>>>
        std::decay_t<T> parallel_reduce(A first, B last, T&& identity, Map&& map, Reduce&& reduce,
                                        Opts&&... options) {
    return parallel_reduce(current_scheduler(), first, last, std::forward<T>(identity), map, reduce,
                           std::forward<Opts>(options)...);
}

// --- over a range: chunk(piece, acc) folds a piece into acc and returns it ----------------------
// A blocked_range is split at offsets (the tree depends on its size and grain); any other range
// is split while is_divisible() (the tree depends on the range alone). Deterministic either way.

template <splittable_range Range, class T, class Chunk, class Reduce, detail::loop_option... Opts>
std::decay_t<T> parallel_reduce(scheduler& sched, const Range& range, T&& identity, Chunk&& chunk,
                                Reduce&& reduce, Opts&&... options) {
    using V = std::decay_t<T>;
    static_assert(detail::range_chunk<Chunk, Range, V>,
                  "fj::parallel_reduce(range, identity, chunk, reduce): chunk must be callable as "
                  "chunk(piece, acc) with piece of the range's type and acc of the identity's "
                  "type, returning the new acc");
    static_assert(detail::reduces_with<V, Reduce, V>,
                  "fj::parallel_reduce(range, identity, chunk, reduce): reduce(a, b) must take two "
                  "values of the identity's type and return one");
    static_assert(detail::count_of<grain, Opts...> == 0,
                  "fj::parallel_reduce: a range carries its own grain; write "
                  "fj::blocked_range<T>{begin, end, grain} instead of passing fj::grain");
    const V id(std::forward<T>(identity));
    const std::stop_token stop = detail::make_loop_options(std::forward<Opts>(options)...).stop;
    if constexpr (detail::is_blocked_range<Range>)
        return detail::parallel_reduce_blocks(sched, range, stop, id, chunk, reduce);
    else
        return detail::parallel_reduce_range(sched, range, stop, id, chunk, reduce);
}

template <splittable_range Range, class T, class Chunk, class Reduce, detail::loop_option... Opts>
std::decay_t<T> parallel_reduce(const Range& range, T&& identity, Chunk&& chunk, Reduce&& reduce,
                                Opts&&... options) {
    return parallel_reduce(current_scheduler(), range, std::forward<T>(identity), chunk, reduce,
                           std::forward<Opts>(options)...);
}

// --- body style (oneTBB's imperative form): body(piece) accumulates, Body(body, fj::split) makes
// a body for a stolen piece, body.join(other) merges the one split from it. Not deterministic:
// how pieces are grouped into bodies depends on stealing. The result is left in `body`.

template <splittable_range Range, class Body, detail::loop_option... Opts>
requires(!std::is_const_v<Body>) void parallel_reduce(scheduler& sched, const Range& range,
                                                      Body& body, Opts&&... options) {
    static_assert(std::invocable<Body&, Range&>,
                  "fj::parallel_reduce(range, body): body must be callable as body(piece) with a "
                  "piece of the range's type (R, const R& or R&)");
    static_assert(std::constructible_from<Body, Body&, split>,
                  "fj::parallel_reduce(range, body): Body needs a splitting constructor "
                  "Body(Body& other, fj::split)");
    static_assert(
        requires(Body & a, Body & b) { a.join(b); },
        "fj::parallel_reduce(range, body): Body needs a member join(Body& other) that "
        "merges what `other` accumulated into *this");
    static_assert(detail::count_of<grain, Opts...> == 0,
                  "fj::parallel_reduce: a range carries its own grain; write "
                  "fj::blocked_range<T>{begin, end, grain} instead of passing fj::grain");
    detail::parallel_reduce_body(
        sched, range, detail::make_loop_options(std::forward<Opts>(options)...).stop, body);
}

template <splittable_range Range, class Body, detail::loop_option... Opts>
requires(!std::is_const_v<Body>) void parallel_reduce(const Range& range, Body& body,
                                                      Opts&&... options) {
    parallel_reduce(current_scheduler(), range, body, std::forward<Opts>(options)...);
}

// --- over random-access iterators: map(element) --------------------------------------------------

template <std::random_access_iterator It, class T, class Map, class Reduce,
          detail::loop_option... Opts>
requires std::invocable<Map&, std::iter_reference_t<It>> &&
    detail::reduces_with<std::decay_t<T>, Reduce,
                         std::invoke_result_t<Map&, std::iter_reference_t<It>>>
        std::decay_t<T> parallel_reduce(scheduler& sched, It first, It last, T&& identity,
                                        Map&& map, Reduce&& reduce, Opts&&... options) {
    const std::decay_t<T> id(std::forward<T>(identity));
    return detail::parallel_reduce_iterators(
        sched, first, last, detail::make_loop_options(std::forward<Opts>(options)...), id, map,
        reduce);
}

template <std::random_access_iterator It, class T, class Map, class Reduce,
          detail::loop_option... Opts>
requires std::invocable<Map&, std::iter_reference_t<It>> &&
    detail::reduces_with<std::decay_t<T>, Reduce,
                         std::invoke_result_t<Map&, std::iter_reference_t<It>>>
        std::decay_t<T> parallel_reduce(It first, It last, T&& identity, Map&& map, Reduce&& reduce,
                                        Opts&&... options) {
    return parallel_reduce(current_scheduler(), first, last, std::forward<T>(identity), map, reduce,
                           std::forward<Opts>(options)...);
}

} // namespace fj
