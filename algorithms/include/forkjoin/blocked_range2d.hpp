// fj::blocked_range2d: rows x cols, each a fj::blocked_range, split along the side that is longer
// relative to its grain (oneTBB's shape: rows(), cols()). For images, matrices, grids.
//
//   fj::parallel_for(fj::blocked_range2d<int>{0, height, 16, 0, width, 64},
//                    [&](const fj::blocked_range2d<int>& r) {
//                        for (int y = r.rows().begin(); y != r.rows().end(); ++y)
//                            for (int x = r.cols().begin(); x != r.cols().end(); ++x) ...;
//                    });
//
// Without grains each side's grain is 1. A reversed side or a zero grain throws
// std::invalid_argument at construction (from the side's blocked_range).
#pragma once

#include "blocked_range.hpp"
#include "range.hpp"

#include <cstddef>

namespace fj {

namespace detail {
// Whether to split `a` rather than `b`: the side with more grains' worth of work, as oneTBB
// decides (size_a / grain_a >= size_b / grain_b, compared without dividing).
template <class A, class B>
bool split_first_side(const A& a, const B& b) noexcept {
    return static_cast<double>(a.size()) * static_cast<double>(b.grainsize()) >=
           static_cast<double>(b.size()) * static_cast<double>(a.grainsize());
}
} // namespace detail

template <blocked_range_value RowValue, blocked_range_value ColValue = RowValue>
class blocked_range2d {
public:
    using row_range_type = blocked_range<RowValue>;
    using col_range_type = blocked_range<ColValue>;

    blocked_range2d(RowValue row_begin, RowValue row_end, std::size_t row_grain, ColValue col_begin,
                    ColValue col_end, std::size_t col_grain)
        : m_rows(row_begin, row_end, row_grain), m_cols(col_begin, col_end, col_grain) {}
    blocked_range2d(RowValue row_begin, RowValue row_end, ColValue col_begin, ColValue col_end)
        : m_rows(row_begin, row_end), m_cols(col_begin, col_end) {}
    blocked_range2d(const row_range_type& rows, const col_range_type& cols)
        : m_rows(rows), m_cols(cols) {}

    // Splitting constructor: r keeps the first half of the side split, this range the second.
    blocked_range2d(blocked_range2d& r, split) : m_rows(r.m_rows), m_cols(r.m_cols) {
        if (detail::split_first_side(r.m_rows, r.m_cols))
            m_rows = row_range_type(r.m_rows, split{});
        else
            m_cols = col_range_type(r.m_cols, split{});
    }

    bool empty() const noexcept { return m_rows.empty() || m_cols.empty(); }
    bool is_divisible() const noexcept { return m_rows.is_divisible() || m_cols.is_divisible(); }
    const row_range_type& rows() const noexcept { return m_rows; }
    const col_range_type& cols() const noexcept { return m_cols; }

private:
    row_range_type m_rows;
    col_range_type m_cols;
};

} // namespace fj
