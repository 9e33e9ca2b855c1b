// fj::flatten2d: a container of containers seen as one forward sequence of their elements
// (oneTBB's flatten2d), typically every thread's part of an enumerable_thread_specific:
//
//   fj::enumerable_thread_specific<std::vector<int>> found;
//   fj::parallel_for(0, n, [&](int i) { if (keep(i)) found.local().push_back(i); });
//   for (int x : fj::flatten2d(found)) ...;                  // every element of every part
//   std::size_t total = fj::flatten2d(found).size();         // the parts' sizes added up
//
// Forms:
//   flatten2d(outer)                  every inner container of `outer`
//   flatten2d(outer, first, last)     the inner containers in [first, last) (oneTBB's spelling;
//                                     `outer` only names the container)
//   flatten2d(first, last)            the same without naming the container
//
// The view holds two outer iterators and owns nothing: the outer container must outlive it, and
// adding or removing elements of the outer or an inner container invalidates it as it would
// invalidate their own iterators. It visits the inner containers in the outer order (an
// enumerable_thread_specific's newest first) and each one's elements in its order, skipping empty
// ones. Through a view of a non-const container the elements can be changed; a const view, or a
// view of a const container, gives const elements (oneTBB's non-const begin() on a view of a const
// container allows changes; here it does not compile).
//
// Iterators are forward iterators (also for random-access inner containers): std algorithms,
// range-for and fj::parallel_for_each (a task per element) take them. size() walks the outer
// containers and adds up the inner sizes; ++ is amortised O(1) plus the empty containers skipped.
// Like the containers' own iterators, a view is not safe to read while another thread changes
// what it covers: flatten an enumerable_thread_specific after the parallel work has finished.
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

namespace fj {

template <class Outer>
class flattened2d;

namespace detail {

// The inner container that an outer iterator refers to, const when Const.
template <class OuterIt, bool Const>
using flat_inner_t =
    std::conditional_t<Const, const std::remove_reference_t<std::iter_reference_t<OuterIt>>,
                       std::remove_reference_t<std::iter_reference_t<OuterIt>>>;

template <class C>
using flat_inner_iterator_t = decltype(std::ranges::begin(std::declval<C&>()));

// An outer iterator to containers (lvalues) whose begin() and end() are forward iterators of one
// type, as every standard container's are.
template <class OuterIt>
concept flattenable = std::forward_iterator<OuterIt> &&
    std::is_lvalue_reference_v<std::iter_reference_t<OuterIt>> &&
    requires(flat_inner_t<OuterIt, false>& c, flat_inner_t<OuterIt, true>& cc) {
    { std::ranges::begin(c) } -> std::forward_iterator;
    { std::ranges::end(c) } -> std::same_as<flat_inner_iterator_t<flat_inner_t<OuterIt, false>>>;
    { std::ranges::begin(cc) } -> std::forward_iterator;
    { std::ranges::end(cc) } -> std::same_as<flat_inner_iterator_t<flat_inner_t<OuterIt, true>>>;
};

// A position in the flattened sequence: an outer position and, unless it is the end, a position
// in that inner container. Invariant: m_outer == m_last, or m_inner points at an element of
// *m_outer (empty inner containers are skipped as soon as they are reached).
template <class OuterIt, bool Const>
class flat_iterator {
    using inner = flat_inner_t<OuterIt, Const>;
    using inner_iterator = flat_inner_iterator_t<inner>;

public:
    using iterator_concept = std::forward_iterator_tag;
    // A proxy reference (std::vector<bool>) makes it an input iterator for the pre-C++20 rules.
    using iterator_category =
        std::conditional_t<std::is_reference_v<std::iter_reference_t<inner_iterator>>,
                           std::forward_iterator_tag, std::input_iterator_tag>;
    using value_type = std::iter_value_t<inner_iterator>;
    using difference_type = std::ptrdiff_t;
    using reference = std::iter_reference_t<inner_iterator>;
    using pointer = std::add_pointer_t<reference>;

    flat_iterator() = default;
    // iterator -> const_iterator
    flat_iterator(const flat_iterator<OuterIt, !Const>& other) requires Const
        : m_outer(other.m_outer),
          m_last(other.m_last),
          m_inner(other.m_inner) {}

    reference operator*() const { return *m_inner; }
    pointer operator->() const requires std::is_lvalue_reference_v<reference> {
        return std::addressof(*m_inner);
    }

    flat_iterator& operator++() {
        ++m_inner;
        if (m_inner == std::ranges::end(current())) {
            ++m_outer;
            settle();
        }
        return *this;
    }
    flat_iterator operator++(int) {
        flat_iterator old = *this;
        ++*this;
        return old;
    }

    friend bool operator==(const flat_iterator& a, const flat_iterator& b) {
        return a.m_outer == b.m_outer && (a.m_outer == a.m_last || a.m_inner == b.m_inner);
    }

private:
    template <class, bool>
    friend class flat_iterator;
    template <class>
    friend class fj::flattened2d;

    flat_iterator(OuterIt first, OuterIt last)
        : m_outer(std::move(first)), m_last(std::move(last)) {
        settle();
    }

    inner& current() const { return *m_outer; }

    // Moves to the first element at or after m_outer, skipping empty inner containers.
    void settle() {
        for (; m_outer != m_last; ++m_outer) {
            m_inner = std::ranges::begin(current());
            if (m_inner != std::ranges::end(current()))
                return;
        }
        m_inner = inner_iterator{};
    }

    OuterIt m_outer{};
    OuterIt m_last{};
    inner_iterator m_inner{};
};

// [first, last) as a container type, for the view made from two iterators.
template <class OuterIt>
struct outer_span {
    OuterIt first;
    OuterIt last;
    OuterIt begin() const { return first; }
    OuterIt end() const { return last; }
};

} // namespace detail

// The elements of the containers in an outer container's range, as one forward sequence.
// Outer is the outer container's type, const for read-only access.
template <class Outer>
class flattened2d {
public:
    using outer_iterator = decltype(std::ranges::begin(std::declval<Outer&>()));
    static_assert(detail::flattenable<outer_iterator>,
                  "fj::flattened2d: the outer container's elements must be containers with "
                  "forward iterators (begin() and end() of one type)");

    using iterator = detail::flat_iterator<outer_iterator, false>;
    using const_iterator = detail::flat_iterator<outer_iterator, true>;
    using value_type = typename iterator::value_type;
    using reference = typename iterator::reference;
    using const_reference = typename const_iterator::reference;
    using pointer = typename iterator::pointer;
    using const_pointer = typename const_iterator::pointer;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;

    explicit flattened2d(Outer& outer)
        : m_first(std::ranges::begin(outer)), m_last(std::ranges::end(outer)) {}
    flattened2d(outer_iterator first, outer_iterator last)
        : m_first(std::move(first)), m_last(std::move(last)) {}

    iterator begin() { return iterator(m_first, m_last); }
    iterator end() { return iterator(m_last, m_last); }
    const_iterator begin() const { return const_iterator(m_first, m_last); }
    const_iterator end() const { return const_iterator(m_last, m_last); }
    const_iterator cbegin() const { return begin(); }
    const_iterator cend() const { return end(); }

    // The inner containers' sizes added up (one step per inner container).
    size_type size() const {
        size_type total = 0;
        for (outer_iterator it = m_first; it != m_last; ++it) {
            const auto& c = *it;
            if constexpr (requires { std::ranges::size(c); })
                total += static_cast<size_type>(std::ranges::size(c));
            else
                total += static_cast<size_type>(
                    std::distance(std::ranges::begin(c), std::ranges::end(c)));
        }
        return total;
    }
    bool empty() const { return begin() == end(); }

private:
    outer_iterator m_first;
    outer_iterator m_last;
};

// Every element of every inner container of `outer`.
template <class Outer>
flattened2d<Outer> flatten2d(Outer& outer) {
    return flattened2d<Outer>(outer);
}
// A view of a temporary would dangle.
template <class Outer>
void flatten2d(const Outer&& outer) = delete;

// The inner containers in [first, last), iterators of `outer` (oneTBB's form): a
// flattened2d<Outer>, or flattened2d<const Outer> for const iterators of a non-const `outer`.
template <class Outer, std::forward_iterator OuterIt>
requires std::same_as<OuterIt, decltype(std::ranges::begin(std::declval<Outer&>()))> ||
    std::same_as<OuterIt, decltype(std::ranges::begin(std::declval<const Outer&>()))>
auto flatten2d(Outer& /*outer*/, OuterIt first, OuterIt last) {
    using view = std::conditional_t<
        std::same_as<OuterIt, decltype(std::ranges::begin(std::declval<Outer&>()))>,
        flattened2d<Outer>, flattened2d<const Outer>>;
    return view(std::move(first), std::move(last));
}

// The inner containers in [first, last).
template <std::forward_iterator OuterIt>
flattened2d<detail::outer_span<OuterIt>> flatten2d(OuterIt first, OuterIt last) {
    return flattened2d<detail::outer_span<OuterIt>>(std::move(first), std::move(last));
}

} // namespace fj
