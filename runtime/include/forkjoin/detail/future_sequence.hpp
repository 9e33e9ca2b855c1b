// The two shapes of input that when_all / when_any accept, visited uniformly: a
// std::vector<future<T>> and a std::tuple<future<Ts>...>.
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

#include <forkjoin/future.hpp>

namespace fj::detail {

template <class T, class Fn>
void for_each_future(std::vector<future<T>>& futures, Fn&& fn) {
    for (std::size_t i = 0; i < futures.size(); ++i)
        fn(futures[i], i);
}

template <class... Ts, class Fn>
void for_each_future(std::tuple<future<Ts>...>& futures, Fn&& fn) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (fn(std::get<I>(futures), I), ...);
    }
    (std::index_sequence_for<Ts...>{});
}

template <class Sequence>
std::size_t future_count(Sequence& futures) {
    std::size_t n = 0;
    for_each_future(futures, [&](auto&, std::size_t) { ++n; });
    return n;
}

// Every input must hold a state: an empty future can never become ready.
template <class Sequence>
void check_all_valid(Sequence& futures, const char* who) {
    for_each_future(futures, [&](auto& f, std::size_t i) {
        if (!f.valid())
            throw_invalid_argument(std::string(who) + ": input " + std::to_string(i) +
                                   " is an empty future (default-constructed, moved from or "
                                   "already consumed by get())");
    });
}

} // namespace fj::detail
