// Integer and iterator ranges as offsets [0, n): the loop drivers work on std::size_t offsets and
// map them back to the user's index type only when calling the body.
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

#include <forkjoin/errors.hpp>

namespace fj::detail {

// The index type the body sees for parallel_for(first, last, ...): the common type, so
// parallel_for(0, v.size(), ...) iterates std::size_t as users expect.
template <std::integral A, std::integral B>
using loop_index_t = std::common_type_t<A, B>;

// first, first + step, ... below last, as offsets 0..count-1.
template <std::integral Index>
struct index_space {
    Index first;
    std::size_t step;
    std::size_t count;

    Index at(std::size_t offset) const noexcept {
        // Modular arithmetic in the unsigned type, then back: well defined for every Index.
        using U = std::make_unsigned_t<Index>;
        return static_cast<Index>(static_cast<U>(first) + static_cast<U>(offset * step));
    }
};

template <std::integral Index, std::integral A, std::integral B, std::integral S = int>
index_space<Index> make_index_space(const char* who, A first, B last, S step = 1) {
    static_assert(sizeof(Index) <= sizeof(std::size_t), "fj: index types wider than size_t");
    if (step <= 0)
        throw_invalid_argument(std::string(who) + ": the step must be positive, not " +
                               std::to_string(step));
    if (std::cmp_greater(first, last))
        throw_invalid_argument(std::string(who) + ": reversed range (first " +
                               std::to_string(first) + " > last " + std::to_string(last) + ")");
    // The common type cannot hold a negative first with an unsigned last (-1 would become huge).
    if (!std::in_range<Index>(first) || !std::in_range<Index>(last))
        throw_invalid_argument(std::string(who) + ": first " + std::to_string(first) +
                               " and last " + std::to_string(last) +
                               " do not fit one index type (a negative first with an unsigned "
                               "last?); cast them to a common signed type");
    using U = std::make_unsigned_t<Index>;
    // Cast the difference back to U: narrow types are promoted to int before subtracting.
    const auto distance = static_cast<std::size_t>(static_cast<U>(
        static_cast<U>(static_cast<Index>(last)) - static_cast<U>(static_cast<Index>(first))));
    const auto stride = static_cast<std::size_t>(step);
    return {static_cast<Index>(first), stride, distance / stride + (distance % stride != 0)};
}

template <std::random_access_iterator It>
std::size_t iterator_distance(const char* who, It first, It last) {
    const auto n = last - first;
    if (n < 0)
        throw_invalid_argument(std::string(who) + ": reversed iterator range (last is " +
                               std::to_string(-n) + " elements before first)");
    return static_cast<std::size_t>(n);
}

} // namespace fj::detail
