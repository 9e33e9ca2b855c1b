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
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

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
    return run_reduce("fj::parallel_reduce", sched, space.count, options, identity, leaf, reduce);
}

template <class Value, class T, class Chunk, class Reduce>
T parallel_reduce_blocks(scheduler& sched, const blocked_range<Value>& range, loop_options options,
                         const T& identity, Chunk& chunk, Reduce& reduce) {
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
    options.grain = range.grain();
    return run_reduce("fj::parallel_reduce", sched, range.size(), options, identity, leaf, reduce);
}

// A fixed tree whatever the partitioner (never the lazy rule: the result must not depend on
// stealing); affinity pieces are folded in serial order.
template <class Range, class T, class Chunk, class Reduce>
T parallel_reduce_range(scheduler& sched, const Range& range, const loop_options& options,
                        const T& identity, Chunk& chunk, Reduce& reduce) {
    ext::check_callable(chunk);
    ext::check_callable(reduce);
    loop_failure failure;
    const split_rule rule =
        options.kind == partition::per_worker ? split_rule::to_depth : split_rule::to_grain;
    range_splitter<Range> splitter(sched, failure, rule);
    range_reduce_tree<T, Range, Chunk, Reduce> tree(splitter, identity, chunk, reduce);
    auto work = [&]() -> T {
        if (options.kind != partition::affinity) {
            Range whole(range);
            return tree.run(whole, 0, 0);
        }
        range_pieces<Range> plan(range, sched.worker_count());
        std::vector<std::optional<T>> results(plan.pieces.size());
        auto run_piece = [&](std::size_t i) {
            if (plan.keys[i] >= failure.limit())
                return;
            try {
                results[i].emplace(tree.leaf(plan.pieces[i]));
            } catch (...) {
                failure.record(plan.keys[i], std::current_exception());
            }
        };
        run_with_affinity(sched, *options.affinity, plan.pieces.size(), run_piece);
        return fold_in_order(
            results, [&](std::size_t i) { return plan.keys[i]; }, identity, reduce, failure);
    };
    return run_tracked("fj::parallel_reduce", sched, options.stop, failure, false, identity, work);
}

// The body style with an affinity_partitioner: the first piece goes to `body`, every other to a
// body split from it before anything runs; they are joined back in serial order.
template <class Range, class Body>
void reduce_body_pieces(scheduler& sched, const Range& range, affinity_partitioner& ap,
                        loop_failure& failure, Body& body) {
    range_pieces<Range> plan(range, sched.worker_count());
    const std::size_t n = plan.pieces.size();
    std::vector<std::optional<Body>> bodies(n);
    for (std::size_t i = 1; i < n; ++i) {
        try {
            bodies[i].emplace(body, split{});
        } catch (...) {
            failure.record(plan.keys[i], std::current_exception());
            break;
        }
    }
    auto run_piece = [&](std::size_t i) {
        if (plan.keys[i] >= failure.limit())
            return;
        try {
            if (!plan.pieces[i].empty())
                ext::invoke(i == 0 ? body : *bodies[i], plan.pieces[i]);
        } catch (...) {
            failure.record(plan.keys[i], std::current_exception());
        }
    };
    run_with_affinity(sched, ap, n, run_piece);
    for (std::size_t i = 1; i < n && plan.keys[i] < failure.limit(); ++i) {
        try {
            body.join(*bodies[i]);
        } catch (...) {
            failure.record(plan.keys[i], std::current_exception());
        }
    }
}

template <class Range, class Body>
void parallel_reduce_body(scheduler& sched, const Range& range, const loop_options& options,
                          Body& body) {
    loop_failure failure;
    range_splitter<Range> splitter(sched, failure, split_rule_for(options.kind, range));
    auto work = [&] {
        if (options.kind == partition::affinity) {
            reduce_body_pieces(sched, range, *options.affinity, failure, body);
        } else {
            Range whole(range);
            reduce_range(splitter, whole, body, 0, 0);
        }
        return true;
    };
    run_tracked("fj::parallel_reduce", sched, options.stop, failure, false, false, work);
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
    return run_reduce("fj::parallel_reduce", sched, n, options, identity, leaf, reduce);
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
requires(!detail::loop_option<Chunk> &&
         !detail::loop_option<Reduce>) std::decay_t<T> parallel_reduce(scheduler& sched,
                                                                       const Range& range,
                                                                       T&& identity, Chunk&& chunk,
                                                                       Reduce&& reduce,
                                                                       Opts&&... options) {
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
    const detail::loop_options o = detail::make_loop_options(std::forward<Opts>(options)...);
    if constexpr (detail::is_blocked_range<Range>)
        return detail::parallel_reduce_blocks(sched, range, o, id, chunk, reduce);
    else
        return detail::parallel_reduce_range(sched, range, o, id, chunk, reduce);
}

template <splittable_range Range, class T, class Chunk, class Reduce, detail::loop_option... Opts>
requires(!detail::loop_option<Chunk> &&
         !detail::loop_option<Reduce>) std::decay_t<T> parallel_reduce(const Range& range,
                                                                       T&& identity, Chunk&& chunk,
                                                                       Reduce&& reduce,
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
    detail::parallel_reduce_body(sched, range,
                                 detail::make_loop_options(std::forward<Opts>(options)...), body);
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
