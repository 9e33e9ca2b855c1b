// The optional trailing arguments of the loop algorithms: a fj::grain, a std::stop_token and one
// of oneTBB's partitioners (partitioner.hpp), in any order, each at most once. One variadic tail
// instead of an overload per combination keeps the overload sets small, and so keeps the
// compiler's "no matching function" lists short.
#pragma once

#include <concepts>
#include <cstddef>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/grain.hpp>
#include <forkjoin/partitioner.hpp>

namespace fj::detail {

template <class T>
concept partitioner_option = std::same_as<std::remove_cvref_t<T>, simple_partitioner> ||
    std::same_as<std::remove_cvref_t<T>, auto_partitioner> ||
    std::same_as<std::remove_cvref_t<T>, static_partitioner> ||
    std::same_as<std::remove_cvref_t<T>, affinity_partitioner>;

template <class T>
concept loop_option = std::same_as<std::remove_cvref_t<T>, grain> ||
    std::same_as<std::remove_cvref_t<T>, std::stop_token> || partitioner_option<T>;

// Which partitioner a call was given (none: the automatic rule, as auto_partitioner).
enum class partition { automatic, simple, per_worker, affinity };

struct loop_options {
    std::size_t grain = 0; // 0: the algorithm's own choice
    std::stop_token stop;  // no stop state: never stopped
    partition kind = partition::automatic;
    affinity_partitioner* affinity = nullptr; // with partition::affinity
};

template <class T, class... Opts>
inline constexpr std::size_t count_of = (std::size_t{0} + ... +
                                         std::same_as<std::remove_cvref_t<Opts>, T>);

template <class... Opts>
inline constexpr std::size_t partitioner_count = (std::size_t{0} + ... +
                                                  (partitioner_option<Opts> ? 1 : 0));

template <loop_option... Opts>
loop_options make_loop_options(Opts&&... opts) {
    static_assert(count_of<grain, Opts...> <= 1, "fj: pass at most one fj::grain to a loop");
    static_assert(count_of<std::stop_token, Opts...> <= 1,
                  "fj: pass at most one std::stop_token to a loop");
    static_assert(partitioner_count<Opts...> <= 1, "fj: pass at most one partitioner to a loop");
    loop_options o;
    [[maybe_unused]] const auto take = [&o]<class T>(T&& opt) {
        using O = std::remove_cvref_t<T>;
        if constexpr (std::same_as<O, grain>) {
            o.grain = opt.value;
        } else if constexpr (std::same_as<O, std::stop_token>) {
            o.stop = std::forward<T>(opt);
        } else if constexpr (std::same_as<O, simple_partitioner>) {
            o.kind = partition::simple;
        } else if constexpr (std::same_as<O, auto_partitioner>) {
            o.kind = partition::automatic;
        } else if constexpr (std::same_as<O, static_partitioner>) {
            o.kind = partition::per_worker;
        } else {
            static_assert(
                std::is_lvalue_reference_v<T> && !std::is_const_v<std::remove_reference_t<T>>,
                "fj: pass an fj::affinity_partitioner as a non-const lvalue that outlives "
                "the call (it records where each piece ran, for the next call)");
            o.kind = partition::affinity;
            o.affinity = &opt;
        }
    };
    (take(std::forward<Opts>(opts)), ...);
    return o;
}

// A form that takes only some partitioners names them in its static_assert.
template <class... Opts>
inline constexpr bool no_static_or_affinity =
    count_of<static_partitioner, Opts...> == 0 && count_of<affinity_partitioner, Opts...> == 0;

} // namespace fj::detail
