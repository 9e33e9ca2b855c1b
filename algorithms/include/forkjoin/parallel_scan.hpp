// Deterministic parallel prefix scans: fj::inclusive_scan and fj::exclusive_scan in the STL's
// shape, and fj::parallel_scan in oneTBB's functional shape.
//
//   fj::inclusive_scan(v.begin(), v.end(), out.begin());                  // out[i] = v[0]+...+v[i]
//   fj::inclusive_scan(v.begin(), v.end(), out.begin(), op);
//   fj::inclusive_scan(v.begin(), v.end(), out.begin(), op, init);        // init op v[0] op ...
//   fj::exclusive_scan(v.begin(), v.end(), out.begin(), init);  // out[i] = init+...+v[i-1]
//   fj::exclusive_scan(v.begin(), v.end(), out.begin(), init, op);
//   T total = fj::parallel_scan(fj::blocked_range<std::size_t>{0, n}, identity,
//       [&](const fj::blocked_range<std::size_t>& r, T sum, bool is_final) {
//           for (auto i = r.begin(); i != r.end(); ++i) {
//               sum = sum + in[i];
//               if (is_final) out[i] = sum;
//           }
//           return sum;
//       },
//       [](const T& left, const T& right) { return left + right; });
//
// Each form also takes a fj::scheduler& first and a std::stop_token last (a stop request keeps
// blocks not started from starting; the call throws fj::operation_cancelled), and the iterator
// forms an fj::grain last (the most elements in a block), in either order with the token. Both
// iterators are random access (every block writes its own part of the
// output); out == first (in place) works, other overlaps do not. The forms return the output's
// end, parallel_scan the total (identity for an empty range).
//
// Types, as the STL's parallel overloads: without init the value type is the input's; with init,
// init's (decayed). op(T, element) and op(T, T) must give a T, and T must be constructible from
// an element (a block's sum starts from its first element). op must be associative; it need not
// be commutative: operands always keep their order.
//
// Blocks (detail/scan_tree.hpp): each block's sum is its own fold, each block's carry the left
// fold of the sums before it, and each block's outputs run from its carry. Blocks depend only on
// the size and the grain (default: about 1024 blocks of at least 1024 elements), so the results
// are bit-identical for any worker count and steal pattern (floating point included), as
// parallel_reduce's are. They may differ in the last bits from a serial std::inclusive_scan,
// which adds in one long chain. A block whose carry is known when it starts (every block on one
// worker) is read once, its outputs and its sum folded together; a stolen block is read twice,
// summed first and scanned once its carry is known.
//
// parallel_scan: the body is called once per block with is_final == false (the pre-scan: return
// the block's fold of `sum`; the outputs are not written) and once with is_final == true (the
// final scan: write the outputs and return the running value), as oneTBB's body, in either order;
// the last block is only final-scanned. `sum` is identity for the first block. combine(left, right)
// joins block sums in order. The blocks come from the range's grain if it has one.
//
// Exceptions: the lowest position that throws wins, as in the other loops (a combine counts at
// the first element it brings in); blocks above it are cancelled, and the outputs below its block
// are written. A reversed range, a zero grain or an empty callable throw std::invalid_argument.
#pragma once

#include "blocked_range.hpp"
#include "detail/index_space.hpp"
#include "detail/loop_options.hpp"
#include "detail/scan_leaves.hpp"
#include "grain.hpp"
#include "parallel_scan_body.hpp" // fj::parallel_scan(range, body), oneTBB's body style

#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {

// std::plus<> without <functional>, which the algorithms keep out of users' translation units.
struct scan_plus {
    template <class A, class B>
    constexpr auto operator()(A&& a, B&& b) const
        -> decltype(std::forward<A>(a) + std::forward<B>(b)) {
        return std::forward<A>(a) + std::forward<B>(b);
    }
};

template <class Op, class T, class It>
concept scan_op = std::constructible_from<T, std::iter_reference_t<It>> &&
    std::convertible_to<std::invoke_result_t<Op&, const T&, std::iter_reference_t<It>>, T> &&
    std::convertible_to<std::invoke_result_t<Op&, const T&, const T&>, T>;

template <class Out, class T>
concept scan_output = std::random_access_iterator<Out> && std::indirectly_writable<Out, T&>;

// The trailing options: at most one fj::grain and one std::stop_token, in either order
// (loop_options.hpp checks the counts).
template <class... Opts>
concept scan_tail = ((loop_option<Opts> && !partitioner_option<Opts>)&&...);

// The functional parallel_scan's body(piece, sum, is_final) and combine(left, right), each giving a
// value of the identity's (decayed) type.
template <class Body, class Combine, class Index, class T>
concept functional_scan_parts = std::convertible_to < std::invoke_result_t < Body&,
        const blocked_range<Index>
&, const std::decay_t<T>&, bool >,
    std::decay_t < T >>
        &&std::convertible_to<
            std::invoke_result_t<Combine&, const std::decay_t<T>&, const std::decay_t<T>&>,
            std::decay_t<T>>;

// parallel_scan's range carries its grain: a std::stop_token and fj::simple_partitioner or
// fj::auto_partitioner (oneTBB's scan takes those two), each at most once, in either order.
template <class... S>
concept stop_tail = ((std::same_as<std::remove_cvref_t<S>, std::stop_token> ||
                      std::same_as<std::remove_cvref_t<S>, simple_partitioner> ||
                      std::same_as<std::remove_cvref_t<S>, auto_partitioner>)&&...);

} // namespace detail

// --- inclusive_scan ------------------------------------------------------------------------------

template <std::random_access_iterator It, class Out, class... G>
requires detail::scan_output<Out, std::iter_value_t<It>> && detail::scan_tail<G...> &&
    detail::scan_op<detail::scan_plus, std::iter_value_t<It>, It>
        Out inclusive_scan(scheduler& sched, It first, It last, Out out, G... g) {
    detail::scan_plus op;
    return detail::iterator_scan<std::iter_value_t<It>, It, Out, detail::scan_plus, false>(
        sched, "fj::inclusive_scan", first, last, out, op, nullptr,
        detail::make_loop_options(g...));
}

template <std::random_access_iterator It, class Out, class Op, class... G>
requires detail::scan_output<Out, std::iter_value_t<It>> && detail::scan_tail<G...> &&
    detail::scan_op<Op, std::iter_value_t<It>, It>
        Out inclusive_scan(scheduler& sched, It first, It last, Out out, Op&& op, G... g) {
    return detail::iterator_scan<std::iter_value_t<It>, It, Out, Op, false>(
        sched, "fj::inclusive_scan", first, last, out, op, nullptr,
        detail::make_loop_options(g...));
}

template <std::random_access_iterator It, class Out, class Op, class T, class... G>
requires(!detail::loop_option<T>) && detail::scan_output<Out, std::decay_t<T>>&& detail::scan_tail<
                                         G...>&& detail::scan_op<Op, std::decay_t<T>, It> Out
    inclusive_scan(scheduler& sched, It first, It last, Out out, Op&& op, T&& init, G... g) {
    const std::decay_t<T> carry(std::forward<T>(init));
    return detail::iterator_scan<std::decay_t<T>, It, Out, Op, false>(
        sched, "fj::inclusive_scan", first, last, out, op, &carry, detail::make_loop_options(g...));
}

template <std::random_access_iterator It, class Out, class... G>
requires detail::scan_output<Out, std::iter_value_t<It>> && detail::scan_tail<G...> &&
    detail::scan_op<detail::scan_plus, std::iter_value_t<It>, It>
        Out inclusive_scan(It first, It last, Out out, G... g) {
    return fj::inclusive_scan(current_scheduler(), first, last, out, g...);
}

template <std::random_access_iterator It, class Out, class Op, class... G>
requires detail::scan_output<Out, std::iter_value_t<It>> && detail::scan_tail<G...> &&
    detail::scan_op<Op, std::iter_value_t<It>, It>
        Out inclusive_scan(It first, It last, Out out, Op&& op, G... g) {
    return fj::inclusive_scan(current_scheduler(), first, last, out, op, g...);
}

template <std::random_access_iterator It, class Out, class Op, class T, class... G>
requires(!detail::loop_option<T>) && detail::scan_output<Out, std::decay_t<T>>&& detail::scan_tail<
                                         G...>&& detail::scan_op<Op, std::decay_t<T>, It> Out
    inclusive_scan(It first, It last, Out out, Op&& op, T&& init, G... g) {
    return fj::inclusive_scan(current_scheduler(), first, last, out, op, std::forward<T>(init),
                              g...);
}

// --- exclusive_scan ------------------------------------------------------------------------------

template <std::random_access_iterator It, class Out, class T, class Op, class... G>
requires(!detail::loop_option<T>) && detail::scan_output<Out, std::decay_t<T>>&& detail::scan_tail<
                                         G...>&& detail::scan_op<Op, std::decay_t<T>, It> Out
    exclusive_scan(scheduler& sched, It first, It last, Out out, T&& init, Op&& op, G... g) {
    const std::decay_t<T> carry(std::forward<T>(init));
    return detail::iterator_scan<std::decay_t<T>, It, Out, Op, true>(
        sched, "fj::exclusive_scan", first, last, out, op, &carry, detail::make_loop_options(g...));
}

template <std::random_access_iterator It, class Out, class T, class... G>
requires(!detail::loop_option<T>) &&
    detail::scan_output<Out, std::decay_t<T>>&& detail::scan_tail<G...>&& detail::scan_op<
        detail::scan_plus, std::decay_t<T>, It> Out
    exclusive_scan(scheduler& sched, It first, It last, Out out, T&& init, G... g) {
    return fj::exclusive_scan(sched, first, last, out, std::forward<T>(init), detail::scan_plus{},
                              g...);
}

template <std::random_access_iterator It, class Out, class T, class Op, class... G>
requires(!detail::loop_option<T>) && detail::scan_output<Out, std::decay_t<T>>&& detail::scan_tail<
                                         G...>&& detail::scan_op<Op, std::decay_t<T>, It> Out
    exclusive_scan(It first, It last, Out out, T&& init, Op&& op, G... g) {
    return fj::exclusive_scan(current_scheduler(), first, last, out, std::forward<T>(init), op,
                              g...);
}

template <std::random_access_iterator It, class Out, class T, class... G>
requires(!detail::loop_option<T>) &&
    detail::scan_output<Out, std::decay_t<T>>&& detail::scan_tail<G...>&& detail::scan_op<
        detail::scan_plus, std::decay_t<T>, It> Out
    exclusive_scan(It first, It last, Out out, T&& init, G... g) {
    return fj::exclusive_scan(current_scheduler(), first, last, out, std::forward<T>(init),
                              detail::scan_plus{}, g...);
}

// --- parallel_scan: oneTBB's functional form
// ------------------------------------------------------

template <std::integral Index, class T, class Body, class Combine, class... S>
requires detail::stop_tail<S...> && detail::functional_scan_parts<Body, Combine, Index, T>
    std::decay_t<T> parallel_scan(scheduler& sched, const blocked_range<Index>& range, T&& identity,
                                  Body&& body, Combine&& combine, S&&... stop) {
    using V = std::decay_t<T>;
    ext::check_callable(body);
    ext::check_callable(combine);
    const V id(std::forward<T>(identity));
    detail::range_scan_leaves<Index, V, std::remove_reference_t<Body>> leaves(range, id, body);
    detail::loop_options options = detail::make_loop_options(std::forward<S>(stop)...);
    options.grain = range.grain();
    if (options.kind == detail::partition::simple && options.grain == 0)
        options.grain = 1; // simple_partitioner: blocks of the range's grainsize()
    std::optional<V> total = detail::run_scan<V>("fj::parallel_scan", sched, range.size(), options,
                                                 &id, leaves, combine);
    return total ? std::move(*total) : id;
}

template <std::integral Index, class T, class Body, class Combine, class... S>
requires detail::stop_tail<S...> && detail::functional_scan_parts<Body, Combine, Index, T>
    std::decay_t<T> parallel_scan(const blocked_range<Index>& range, T&& identity, Body&& body,
                                  Combine&& combine, S&&... stop) {
    return fj::parallel_scan(current_scheduler(), range, std::forward<T>(identity), body, combine,
                             std::forward<S>(stop)...);
}

} // namespace fj
