// fj::parallel_invoke(f1, f2, ..., fn): run the callables, possibly in parallel, and return when
// all have finished. Built on fj::join over a balanced split of the argument list, so it allocates
// nothing and n callables cost n - 1 joins.
//
//   fj::parallel_invoke([&] { left(); }, [&] { right(); });
//   fj::parallel_invoke([&] { a(); }, [&] { b(); }, [&] { c(); }, source.get_token());
//
// A trailing std::stop_token makes the call stoppable: a stop request made before the call returns
// skips the callables that have not started (running ones finish; they can poll the token), and
// the call then throws fj::operation_cancelled. A normal return means every callable ran.
//
// Exceptions: if fi throws, the callables after it that have not started are skipped, and the
// exception rethrown is the lowest-numbered one among those that threw (the left branch of every
// join wins), which is what calling them in order would have thrown. Results are discarded. A
// callable's exception outranks a stop request.
#pragma once

#include <concepts>
#include <cstddef>
#include <stop_token>
#include <tuple>
#include <type_traits>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/errors.hpp>
#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {

// stop is null for the plain form: then nothing is checked between callables.
template <std::size_t Lo, std::size_t Hi, class Tuple>
void invoke_slice(scheduler& sched, Tuple& fns, const std::stop_token* stop) {
    if constexpr (Hi - Lo == 1) {
        if (stop == nullptr || !stop->stop_requested())
            ext::invoke(std::get<Lo>(fns));
    } else {
        constexpr std::size_t mid = Lo + (Hi - Lo) / 2;
        sched.join([&] { invoke_slice<Lo, mid>(sched, fns, stop); },
                   [&] { invoke_slice<mid, Hi>(sched, fns, stop); });
    }
}

template <class... Fns>
void invoke_all(scheduler& sched, const std::stop_token* stop, Fns&... fns) {
    (ext::check_callable(fns), ...);
    if constexpr (sizeof...(Fns) == 1) {
        // Still on the scheduler, as the other counts are.
        sched.join(
            [&] {
                if (stop == nullptr || !stop->stop_requested())
                    ext::invoke(fns...);
            },
            [] {});
    } else if constexpr (sizeof...(Fns) > 1) {
        std::tuple<Fns&...> refs(fns...);
        invoke_slice<0, sizeof...(Fns)>(sched, refs, stop);
    }
    // After every join: a request seen by any callable's check is seen here too (a stop request
    // cannot be undone).
    if (stop != nullptr && stop->stop_requested())
        throw_operation_cancelled("fj::parallel_invoke");
}

template <class T>
inline constexpr bool is_stop_token_v = std::is_same_v<std::remove_cvref_t<T>, std::stop_token>;

// Splits the arguments into the callables and a trailing std::stop_token, if there is one.
template <std::size_t... I, class Args>
void invoke_with_token(scheduler& sched, std::index_sequence<I...>, Args&& args) {
    constexpr std::size_t last = sizeof...(I);
    const std::stop_token& stop = std::get<last>(args);
    invoke_all(sched, &stop, std::get<I>(args)...);
}

// Every argument is callable with no arguments, except that the last may be a std::stop_token.
template <class... Args>
consteval bool valid_invoke_arguments() {
    if constexpr (sizeof...(Args) == 0) {
        return true;
    } else {
        using tuple = std::tuple<Args...>;
        constexpr std::size_t n = sizeof...(Args);
        constexpr bool with_token = is_stop_token_v<std::tuple_element_t<n - 1, tuple>>;
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return (
                ((I + 1 == n && with_token) ||
                 std::invocable<std::remove_reference_t<std::tuple_element_t<I, tuple>>&>)&&...);
        }
        (std::index_sequence_for<Args...>{});
    }
}

template <class... Args>
concept invoke_arguments = valid_invoke_arguments<Args...>();

template <class... Args>
void parallel_invoke_args(scheduler& sched, Args&&... args) {
    if constexpr (sizeof...(Args) > 0 && (is_stop_token_v<Args> || ...)) {
        std::tuple<Args&...> refs(args...);
        invoke_with_token(sched, std::make_index_sequence<sizeof...(Args) - 1>{}, refs);
    } else {
        invoke_all(sched, nullptr, args...);
    }
}

} // namespace detail

template <class... Args>
requires detail::invoke_arguments<Args...>
void parallel_invoke(scheduler& sched, Args&&... args) {
    detail::parallel_invoke_args(sched, args...);
}

template <class... Args>
requires detail::invoke_arguments<Args...>
void parallel_invoke(Args&&... args) {
    detail::parallel_invoke_args(current_scheduler(), args...);
}

} // namespace fj
