// What the range forms of fj::parallel_for and fj::parallel_reduce accept: oneTBB's Range shape,
// so that a oneTBB user's own ranges port as they are.
//
//   struct my_range {
//       my_range(const my_range&);            // copyable
//       my_range(my_range& r, fj::split);     // r keeps the first part, *this takes the rest
//       bool empty() const;                   // nothing to do
//       bool is_divisible() const;            // worth splitting: both parts non-empty
//   };
//
// fj::blocked_range, fj::blocked_range2d and fj::blocked_range3d are such ranges.
#pragma once

#include <concepts>

namespace fj {

// The tag that selects a splitting constructor (oneTBB's tbb::split).
struct split {};

template <class R>
concept splittable_range = std::copy_constructible<R> && std::destructible<R> &&
    std::constructible_from<R, R&, split> && requires(const R& r) {
    { r.empty() } -> std::convertible_to<bool>;
    { r.is_divisible() } -> std::convertible_to<bool>;
};

} // namespace fj
