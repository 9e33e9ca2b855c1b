// fj::parallel_invoke(f1, f2, ..., fn): run the callables, possibly in parallel, and return when
// all have finished. Built on fj::join over a balanced split of the argument list, so it allocates
// nothing and n callables cost n - 1 joins.
//
// Exceptions: if fi throws, the callables after it that have not started are skipped, and the
// exception rethrown is the lowest-numbered one among those that threw (the left branch of every
// join wins), which is what calling them in order would have thrown. Results are discarded.
#pragma once

#include <concepts>
#include <cstddef>
#include <tuple>

#include <forkjoin/async.hpp>
#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {

template <std::size_t Lo, std::size_t Hi, class Tuple>
void invoke_slice(scheduler& sched, Tuple& fns) {
    if constexpr (Hi - Lo == 1) {
        ext::invoke(std::get<Lo>(fns));
    } else {
        constexpr std::size_t mid = Lo + (Hi - Lo) / 2;
        sched.join([&] { invoke_slice<Lo, mid>(sched, fns); },
                   [&] { invoke_slice<mid, Hi>(sched, fns); });
    }
}

} // namespace detail

template <class... Fns>
requires(std::invocable<Fns&>&&...) void parallel_invoke(scheduler& sched, Fns&&... fns) {
    (ext::check_callable(fns), ...);
    if constexpr (sizeof...(Fns) == 1) {
        sched.join(fns..., [] {}); // still on the scheduler, as the other counts are
    } else if constexpr (sizeof...(Fns) > 1) {
        std::tuple<Fns&...> refs(fns...);
        detail::invoke_slice<0, sizeof...(Fns)>(sched, refs);
    }
}

template <class... Fns>
requires(std::invocable<Fns&>&&...) void parallel_invoke(Fns&&... fns) {
    parallel_invoke(current_scheduler(), fns...);
}

} // namespace fj
