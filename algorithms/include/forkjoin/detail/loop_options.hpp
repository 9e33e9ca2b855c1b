// The optional trailing arguments of the loop algorithms: a fj::grain and a std::stop_token, in
// either order, each at most once. One variadic tail instead of an overload per combination keeps
// the overload sets small, and so keeps the compiler's "no matching function" lists short.
#pragma once

#include <concepts>
#include <cstddef>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/grain.hpp>

namespace fj::detail {

template <class T>
concept loop_option = std::same_as<std::remove_cvref_t<T>, grain> ||
    std::same_as<std::remove_cvref_t<T>, std::stop_token>;

struct loop_options {
    std::size_t grain = 0; // 0: the algorithm's own choice
    std::stop_token stop;  // no stop state: never stopped
};

template <class T, class... Opts>
inline constexpr std::size_t count_of = (std::size_t{0} + ... +
                                         std::same_as<std::remove_cvref_t<Opts>, T>);

template <loop_option... Opts>
loop_options make_loop_options(Opts&&... opts) {
    static_assert(count_of<grain, Opts...> <= 1, "fj: pass at most one fj::grain to a loop");
    static_assert(count_of<std::stop_token, Opts...> <= 1,
                  "fj: pass at most one std::stop_token to a loop");
    loop_options o;
    [[maybe_unused]] const auto take = [&o]<class T>(T&& opt) {
        if constexpr (std::same_as<std::remove_cvref_t<T>, grain>)
            o.grain = opt.value;
        else
            o.stop = std::forward<T>(opt);
    };
    (take(std::forward<Opts>(opts)), ...);
    return o;
}

} // namespace fj::detail
