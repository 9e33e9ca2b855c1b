// fj::blocked_range<Index>: a half-open index range [begin, end) with an optional grain, the unit
// the blocked forms of parallel_for / parallel_reduce split and hand to the body (TBB's shape).
//
//   fj::parallel_for(fj::blocked_range<std::size_t>{0, n, 1024}, [&](auto r) {
//       for (std::size_t i = r.begin(); i != r.end(); ++i) ...;
//   });
//
// A reversed range or a zero grain throws std::invalid_argument at construction.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>

#include <forkjoin/errors.hpp>

namespace fj {

template <std::integral Index>
class blocked_range {
public:
    using index_type = Index;

    // Without a grain the algorithm chooses the chunk sizes (parallel_for: adaptively).
    constexpr blocked_range(Index begin, Index end) : m_begin(begin), m_end(end) { check(); }
    blocked_range(Index begin, Index end, std::size_t grain)
        : m_begin(begin), m_end(end), m_grain(grain) {
        check();
        if (grain == 0)
            detail::throw_invalid_argument(
                "fj::blocked_range: the grain size must be at least 1, not 0");
    }

    constexpr Index begin() const noexcept { return m_begin; }
    constexpr Index end() const noexcept { return m_end; }
    constexpr std::size_t size() const noexcept {
        // In the unsigned type: end - begin may overflow a signed Index (INT_MIN..INT_MAX).
        // Cast back to U after subtracting: narrow types are promoted to int first.
        using U = std::make_unsigned_t<Index>;
        return static_cast<std::size_t>(
            static_cast<U>(static_cast<U>(m_end) - static_cast<U>(m_begin)));
    }
    constexpr bool empty() const noexcept { return m_begin == m_end; }
    // 0 when no grain was given.
    constexpr std::size_t grain() const noexcept { return m_grain; }

private:
    constexpr void check() const {
        static_assert(sizeof(Index) <= sizeof(std::size_t), "fj::blocked_range: index too wide");
        if (m_end < m_begin)
            detail::throw_invalid_argument("fj::blocked_range: reversed range (begin " +
                                           std::to_string(m_begin) + " > end " +
                                           std::to_string(m_end) + ")");
    }

    Index m_begin;
    Index m_end;
    std::size_t m_grain = 0;
};

} // namespace fj
