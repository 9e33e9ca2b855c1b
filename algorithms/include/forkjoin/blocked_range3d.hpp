// fj::blocked_range3d: pages x rows x cols, each a fj::blocked_range, split along the side that
// is longest relative to its grain (oneTBB's shape: pages(), rows(), cols()). For volumes.
//
// Without grains each side's grain is 1. A reversed side or a zero grain throws
// std::invalid_argument at construction (from the side's blocked_range).
#pragma once

#include "blocked_range.hpp"
#include "blocked_range2d.hpp"
#include "range.hpp"

#include <cstddef>

namespace fj {

template <blocked_range_value PageValue, blocked_range_value RowValue = PageValue,
          blocked_range_value ColValue = RowValue>
class blocked_range3d {
public:
    using page_range_type = blocked_range<PageValue>;
    using row_range_type = blocked_range<RowValue>;
    using col_range_type = blocked_range<ColValue>;

    blocked_range3d(PageValue page_begin, PageValue page_end, std::size_t page_grain,
                    RowValue row_begin, RowValue row_end, std::size_t row_grain, ColValue col_begin,
                    ColValue col_end, std::size_t col_grain)
        : m_pages(page_begin, page_end, page_grain), m_rows(row_begin, row_end, row_grain),
          m_cols(col_begin, col_end, col_grain) {}
    blocked_range3d(PageValue page_begin, PageValue page_end, RowValue row_begin, RowValue row_end,
                    ColValue col_begin, ColValue col_end)
        : m_pages(page_begin, page_end), m_rows(row_begin, row_end), m_cols(col_begin, col_end) {}

    // Splitting constructor: r keeps the first half of the side split, this range the second.
    blocked_range3d(blocked_range3d& r, split)
        : m_pages(r.m_pages), m_rows(r.m_rows), m_cols(r.m_cols) {
        if (detail::split_first_side(r.m_pages, r.m_rows)) {
            if (detail::split_first_side(r.m_pages, r.m_cols))
                m_pages = page_range_type(r.m_pages, split{});
            else
                m_cols = col_range_type(r.m_cols, split{});
        } else if (detail::split_first_side(r.m_rows, r.m_cols)) {
            m_rows = row_range_type(r.m_rows, split{});
        } else {
            m_cols = col_range_type(r.m_cols, split{});
        }
    }

    bool empty() const noexcept { return m_pages.empty() || m_rows.empty() || m_cols.empty(); }
    bool is_divisible() const noexcept {
        return m_pages.is_divisible() || m_rows.is_divisible() || m_cols.is_divisible();
    }
    const page_range_type& pages() const noexcept { return m_pages; }
    const row_range_type& rows() const noexcept { return m_rows; }
    const col_range_type& cols() const noexcept { return m_cols; }

private:
    page_range_type m_pages;
    row_range_type m_rows;
    col_range_type m_cols;
};

} // namespace fj
