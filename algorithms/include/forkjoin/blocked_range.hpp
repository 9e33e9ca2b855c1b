// fj::blocked_range<Value>: a half-open range [begin, end) of integers, pointers or random-access
// iterators, with an optional grain: the unit the range forms of parallel_for / parallel_reduce
// split and hand to the body (oneTBB's shape, a fj::splittable_range).
//
//   fj::parallel_for(fj::blocked_range<std::size_t>{0, n, 1024}, [&](auto r) {
//       for (std::size_t i = r.begin(); i != r.end(); ++i) ...;
//   });
//   fj::parallel_for(fj::blocked_range<const double*>{v.data(), v.data() + v.size()}, body);
//
// A reversed range or a zero grain throws std::invalid_argument at construction.
#pragma once

#include "range.hpp"

#include <concepts>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>

#include <forkjoin/errors.hpp>

namespace fj {

template <class Value>
concept blocked_range_value = std::integral<Value> || std::random_access_iterator<Value>;

template <blocked_range_value Value>
class blocked_range {
public:
    using value_type = Value;
    using index_type = Value;
    using const_iterator = Value; // oneTBB's name for the bound type
    using size_type = std::size_t;

    // Without a grain the algorithm chooses the chunk sizes (parallel_for: adaptively).
    constexpr blocked_range(Value begin, Value end) : m_begin(begin), m_end(end) { check(); }
    blocked_range(Value begin, Value end, std::size_t grain)
        : m_begin(begin), m_end(end), m_grain(grain) {
        check();
        if (grain == 0)
            detail::throw_invalid_argument(
                "fj::blocked_range: the grain size must be at least 1, not 0");
    }

    // Splitting constructor: r keeps the first half, this range takes the second. The grain is
    // kept by both.
    blocked_range(blocked_range& r, split) noexcept
        : m_begin(r.middle()), m_end(r.m_end), m_grain(r.m_grain) {
        r.m_end = m_begin;
    }

    constexpr Value begin() const noexcept { return m_begin; }
    constexpr Value end() const noexcept { return m_end; }
    constexpr std::size_t size() const noexcept {
        if constexpr (std::integral<Value>) {
            // In the unsigned type: end - begin may overflow a signed Value (INT_MIN..INT_MAX).
            // Cast back to U after subtracting: narrow types are promoted to int first.
            using U = std::make_unsigned_t<Value>;
            return static_cast<std::size_t>(
                static_cast<U>(static_cast<U>(m_end) - static_cast<U>(m_begin)));
        } else {
            return static_cast<std::size_t>(m_end - m_begin);
        }
    }
    constexpr bool empty() const noexcept { return !(m_begin < m_end); }
    // 0 when no grain was given.
    constexpr std::size_t grain() const noexcept { return m_grain; }
    // oneTBB's name: the grain, or 1 when none was given.
    constexpr std::size_t grainsize() const noexcept { return m_grain == 0 ? 1 : m_grain; }
    // More than one grain's worth: splitting leaves both halves non-empty.
    constexpr bool is_divisible() const noexcept { return size() > grainsize(); }

    // The bound `offset` elements after begin(): what the loop drivers hand to the body.
    constexpr Value at(std::size_t offset) const noexcept {
        if constexpr (std::integral<Value>) {
            using U = std::make_unsigned_t<Value>;
            return static_cast<Value>(static_cast<U>(m_begin) + static_cast<U>(offset));
        } else {
            return m_begin + static_cast<std::iter_difference_t<Value>>(offset);
        }
    }

private:
    constexpr Value middle() const noexcept { return at(size() / 2); }

    constexpr void check() const {
        if constexpr (std::integral<Value>) {
            static_assert(sizeof(Value) <= sizeof(std::size_t),
                          "fj::blocked_range: index too wide");
            if (m_end < m_begin)
                detail::throw_invalid_argument("fj::blocked_range: reversed range (begin " +
                                               std::to_string(m_begin) + " > end " +
                                               std::to_string(m_end) + ")");
        } else {
            if (m_end < m_begin)
                detail::throw_invalid_argument(
                    "fj::blocked_range: reversed iterator range (end is " +
                    std::to_string(m_begin - m_end) + " elements before begin)");
        }
    }

    Value m_begin;
    Value m_end;
    std::size_t m_grain = 0;
};

namespace detail {
template <class R>
inline constexpr bool is_blocked_range = false;
template <class Value>
inline constexpr bool is_blocked_range<blocked_range<Value>> = true;
} // namespace detail

} // namespace fj
