// A random-access iterator over positions 0..n whose elements are read through a callable,
// value = read(position): lets a test count, slow down or hold back the reads an algorithm makes.
// (std::views::transform over std::views::iota does the same, but clang 14 cannot compile
// libstdc++ 12's <ranges>, and the clang presets build the stress tests.)
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <type_traits>

namespace fj_test {

template <class Read>
class index_iterator {
public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using difference_type = std::ptrdiff_t;
    using value_type = std::remove_cvref_t<std::invoke_result_t<const Read&, std::size_t>>;
    using reference = value_type;

    index_iterator() = default;
    index_iterator(const Read* read, std::ptrdiff_t position) : m_read(read), m_at(position) {}

    value_type operator*() const { return (*m_read)(static_cast<std::size_t>(m_at)); }
    value_type operator[](difference_type k) const { return *(*this + k); }

    index_iterator& operator++() { return ++m_at, *this; }
    index_iterator operator++(int) { return {m_read, m_at++}; }
    index_iterator& operator--() { return --m_at, *this; }
    index_iterator operator--(int) { return {m_read, m_at--}; }
    index_iterator& operator+=(difference_type k) { return m_at += k, *this; }
    index_iterator& operator-=(difference_type k) { return m_at -= k, *this; }
    friend index_iterator operator+(index_iterator it, difference_type k) { return it += k; }
    friend index_iterator operator+(difference_type k, index_iterator it) { return it += k; }
    friend index_iterator operator-(index_iterator it, difference_type k) { return it -= k; }
    friend difference_type operator-(const index_iterator& a, const index_iterator& b) {
        return a.m_at - b.m_at;
    }
    friend bool operator==(const index_iterator& a, const index_iterator& b) {
        return a.m_at == b.m_at;
    }
    friend std::strong_ordering operator<=>(const index_iterator& a, const index_iterator& b) {
        return a.m_at <=> b.m_at;
    }

private:
    const Read* m_read = nullptr;
    std::ptrdiff_t m_at = 0;
};

// [begin, end) over positions 0..n of `read`, which must outlive the iterators.
template <class Read>
struct index_range {
    index_range(const Read& r, std::size_t n) : read(&r), size(n) {}
    index_iterator<Read> begin() const { return {read, 0}; }
    index_iterator<Read> end() const { return {read, static_cast<std::ptrdiff_t>(size)}; }

    const Read* read;
    std::size_t size;
};

} // namespace fj_test
