// What the range forms of fj::parallel_for, fj::parallel_reduce and fj::parallel_scan accept:
// oneTBB's Range shape, so that a oneTBB user's own ranges port as they are; and oneTBB's tag
// types of the range protocols (fj::split, fj::pre_scan_tag, fj::final_scan_tag).
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

// The tags that tell a body-style fj::parallel_scan body which pass it runs (oneTBB's
// tbb::pre_scan_tag and tbb::final_scan_tag): the pre-scan only accumulates a piece's summary; the
// final scan also writes the outputs. Either converts to its is_final_scan().
struct pre_scan_tag {
    static constexpr bool is_final_scan() noexcept { return false; }
    constexpr operator bool() const noexcept { return is_final_scan(); }
};

struct final_scan_tag {
    static constexpr bool is_final_scan() noexcept { return true; }
    constexpr operator bool() const noexcept { return is_final_scan(); }
};

template <class R>
concept splittable_range = std::copy_constructible<R> && std::destructible<R> &&
    std::constructible_from<R, R&, split> && requires(const R& r) {
    { r.empty() } -> std::convertible_to<bool>;
    { r.is_divisible() } -> std::convertible_to<bool>;
};

} // namespace fj
