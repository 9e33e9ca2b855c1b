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
#include "detail/reduce_tree.hpp"
#include "grain.hpp"

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

template <std::integral Index, class T, class Chunk, class Reduce>
T parallel_reduce_blocks(scheduler& sched, const blocked_range<Index>& range,
                         const std::stop_token& stop, const T& identity, Chunk& chunk,
                         Reduce& reduce) {
    ext::check_callable(chunk);
    ext::check_callable(reduce);
    using U = std::make_unsigned_t<Index>;
    auto leaf = [&](std::size_t lo, std::size_t hi, loop_failure& failure) -> T {
        const auto at = [&](std::size_t k) {
            return static_cast<Index>(static_cast<U>(range.begin()) + static_cast<U>(k));
        };
        try {
            return ext::invoke(chunk, blocked_range<Index>(at(lo), at(hi)), T(identity));
        } catch (...) {
            failure.record(lo, std::current_exception());
            return identity;
        }
    };
    return run_reduce("fj::parallel_reduce", sched, range.size(), range.grain(), stop, identity,
                      leaf, reduce);
}

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

// --- over a blocked range: chunk(subrange, acc) folds a subrange into acc and returns it ---------

template <std::integral Index, class T, class Chunk, class Reduce, detail::loop_option... Opts>
requires std::invocable<Chunk&, blocked_range<Index>, std::decay_t<T>> &&
    detail::reduces_with<std::decay_t<T>, Reduce, std::decay_t<T>>
        std::decay_t<T> parallel_reduce(scheduler& sched, const blocked_range<Index>& range,
                                        T&& identity, Chunk&& chunk, Reduce&& reduce,
                                        Opts&&... options) {
    static_assert(detail::count_of<grain, Opts...> == 0,
                  "fj::parallel_reduce: a blocked_range carries its own grain; write "
                  "fj::blocked_range<T>{begin, end, grain} instead of passing fj::grain");
    const std::decay_t<T> id(std::forward<T>(identity));
    return detail::parallel_reduce_blocks(
        sched, range, detail::make_loop_options(std::forward<Opts>(options)...).stop, id, chunk,
        reduce);
}

template <std::integral Index, class T, class Chunk, class Reduce, detail::loop_option... Opts>
requires std::invocable<Chunk&, blocked_range<Index>, std::decay_t<T>> &&
    detail::reduces_with<std::decay_t<T>, Reduce, std::decay_t<T>>
        std::decay_t<T> parallel_reduce(const blocked_range<Index>& range, T&& identity,
                                        Chunk&& chunk, Reduce&& reduce, Opts&&... options) {
    return parallel_reduce(current_scheduler(), range, std::forward<T>(identity), chunk, reduce,
                           std::forward<Opts>(options)...);
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
