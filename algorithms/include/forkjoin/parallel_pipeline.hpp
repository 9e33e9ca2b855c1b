// fj::parallel_pipeline: items flow through a chain of stages, several items at once, with
// oneTBB's shape (so oneTBB code ports by renaming):
//
//   fj::parallel_pipeline(max_tokens,
//       fj::make_filter<void, T>(fj::filter_mode::serial_in_order,
//                                [&](fj::flow_control& fc) -> T { ... fc.stop(); ... }) &
//       fj::make_filter<T, U>(fj::filter_mode::parallel, [](T x) -> U { ... }) &
//       fj::make_filter<U, void>(fj::filter_mode::serial_in_order, [&](U y) { ... }));
//
// - At most max_tokens items are in flight (made by the input and not yet out of the last stage).
// - A serial_in_order stage sees the items one at a time, in input order; serial_out_of_order one
//   at a time, in any order; a parallel stage runs on several items at once (its callable object
//   is shared, not copied). The input stage (the first) is always called by one thread at a
//   time, whatever its mode, so input order is the order the input produced the items in.
// - Returns once the input has called fc.stop() and every item has left the last stage. No
//   thread ever waits for a busy stage (docs/design/pipeline.md).
// - Exceptions: the first exception a stage throws is rethrown to the caller (others are
//   discarded); the input is not called again, items in flight are destroyed without running
//   further stages, and the call returns once the running stages have finished.
// - A trailing std::stop_token: a stop request stops the input and skips work not started; the
//   call then throws fj::operation_cancelled (a stage's exception outranks it). A normal return
//   means every item went through every stage.
// - Throws std::invalid_argument for max_tokens == 0, an empty filter chain, or an empty callable
//   given to make_filter.
#pragma once

#include "detail/pipeline_run.hpp"
#include "detail/pipeline_stage.hpp"

#include <cstddef>
#include <memory>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <forkjoin/async.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/extension.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj {

template <class In, class Out>
class filter;

namespace detail {

template <class T>
inline constexpr bool valid_item = std::is_void_v<T> ||
                                   (std::is_object_v<T> && !std::is_const_v<T> &&
                                    !std::is_volatile_v<T> && std::is_move_constructible_v<T>);

struct filter_access {
    template <class In, class Out>
    static const stage_list& stages(const filter<In, Out>& f) noexcept {
        return f.m_stages;
    }
    template <class In, class Out>
    static bool has_empty_part(const filter<In, Out>& f) noexcept {
        return f.m_has_empty_part;
    }
    template <class In, class Out>
    static filter<In, Out> make(stage_list stages, bool has_empty_part) {
        filter<In, Out> f;
        f.m_stages = std::move(stages);
        f.m_has_empty_part = has_empty_part;
        return f;
    }
};

} // namespace detail

// One stage, or a chain of stages, turning In into Out (void In: the chain starts with the input;
// void Out: it ends with the output). Copies share the stages' callables.
template <class In, class Out>
class filter {
    static_assert(detail::valid_item<In> && detail::valid_item<Out>,
                  "fj::filter<In, Out>: the item types must be void or move-constructible object "
                  "types without const or a reference");

public:
    filter() = default; // empty: parallel_pipeline rejects a chain with an empty part

    template <class F>
    filter(filter_mode mode, F&& fn) {
        static_assert(
            detail::stage_callable<In, Out, std::decay_t<F>>(),
            "fj::make_filter<In, Out>(mode, f): f must be callable as f(fj::flow_control&) "
            "when In is void (the input stage), else as f(In&&), and return something Out "
            "can be constructed from (anything when Out is void)");
        ext::check_callable(fn);
        if (mode != filter_mode::parallel && mode != filter_mode::serial_in_order &&
            mode != filter_mode::serial_out_of_order)
            detail::throw_invalid_argument("fj::make_filter: not a filter_mode (" +
                                           std::to_string(static_cast<int>(mode)) + ")");
        m_stages.push_back(std::make_shared<detail::stage_of<In, Out, std::decay_t<F>>>(
            mode, std::forward<F>(fn)));
    }

private:
    friend struct detail::filter_access;
    detail::stage_list m_stages;
    bool m_has_empty_part = false; // a default-constructed or moved-from filter went into it
};

template <class In, class Out, class F>
filter<In, Out> make_filter(filter_mode mode, F&& fn) {
    return filter<In, Out>(mode, std::forward<F>(fn));
}

// filter<A, B> & filter<B, C> -> filter<A, C>: the stages of the left, then those of the right.
template <class A, class B, class C, class D>
filter<A, D> operator&(const filter<A, B>& left, const filter<C, D>& right) {
    static_assert(std::is_same_v<B, C>,
                  "fj::filter: in left & right, the left filter's output type must be the right "
                  "filter's input type");
    static_assert(!std::is_void_v<B>,
                  "fj::filter: a filter that outputs void must be the last of the chain, and one "
                  "that takes void (the input) the first");
    using access = detail::filter_access;
    detail::stage_list stages(access::stages(left));
    const detail::stage_list& tail = access::stages(right);
    stages.insert(stages.end(), tail.begin(), tail.end());
    const bool empty_part = access::has_empty_part(left) || access::has_empty_part(right) ||
                            access::stages(left).empty() || tail.empty();
    return access::make<A, D>(std::move(stages), empty_part);
}

inline void parallel_pipeline(scheduler& sched, std::size_t max_tokens,
                              const filter<void, void>& chain, std::stop_token stop = {}) {
    using access = detail::filter_access;
    if (max_tokens == 0)
        detail::throw_invalid_argument(
            "fj::parallel_pipeline: max_tokens must be at least 1, not 0");
    if (access::stages(chain).empty() || access::has_empty_part(chain))
        detail::throw_invalid_argument(
            "fj::parallel_pipeline: the filter chain is empty or has an empty part (a "
            "default-constructed or moved-from fj::filter)");
    detail::pipeline_run run(sched, max_tokens, access::stages(chain), std::move(stop));
    run.run();
}

inline void parallel_pipeline(std::size_t max_tokens, const filter<void, void>& chain,
                              std::stop_token stop = {}) {
    parallel_pipeline(current_scheduler(), max_tokens, chain, std::move(stop));
}

} // namespace fj
