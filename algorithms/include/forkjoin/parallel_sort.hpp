// fj::parallel_sort: sorts a random-access range in parallel. Not stable, like std::sort and
// tbb::parallel_sort: equivalent elements may end up in any order.
//
//   fj::parallel_sort(v.begin(), v.end());                    // operator<
//   fj::parallel_sort(v.begin(), v.end(), std::greater<>{});  // any strict weak order
//   fj::parallel_sort(v);                                     // a container or other range
//   fj::parallel_sort(pool, v, comp);                         // on `pool`
//
// Each form also takes a fj::scheduler& first; without it the current scheduler sorts. Ranges of
// at most k_sort_cutoff elements are sorted by std::sort on the calling thread; larger ones run
// on the scheduler (as one task there when called from outside it) and the call returns once the
// range is sorted.
//
// The algorithm: parallel quicksort. A range above the cutoff is partitioned around the median of
// nine samples (Tukey's ninther), then both sides are sorted by fj::join; at or below the cutoff,
// std::sort. It sorts in place (no buffer, no allocation) and does the comparisons and swaps a
// serial quicksort does, so on one worker it costs about what std::sort costs. What limits the
// speed-up is the partition of the whole range, before which no piece exists for a second worker
// (about 1/log2(n) of the work). So while there are fewer pieces than workers, a partition is
// itself split between them (partition_in_parallel), for one extra swap of at most half the
// range. On a few cores this costs less than the extra pass over memory that every level of a
// parallel merge sort makes (docs/performance-algorithms.md#parallel-sort). A depth limit of 2
// log2(n) partitions, as in introsort, hands a range that keeps splitting badly to std::sort, which
// is O(n log n) on its own: never quadratic.
//
// comp is called concurrently from several threads, by reference (it is not copied). A reversed
// iterator range or a null function pointer comp throws std::invalid_argument before anything
// is moved. An exception from comp (or from moving an element) reaches the caller once every
// running piece has stopped; the range then holds every element in a valid but unspecified state,
// as std::sort leaves it (std::sort may leave an element moved from).
#pragma once

#include "detail/index_space.hpp"

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/extension.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj {

namespace detail {

// operator<, as std::sort uses by default (std::less<> would need <functional>). Constrained, so
// that a type without operator< fails at the call of parallel_sort, not deep inside std::sort.
struct sort_less {
    template <class A, class B>
    requires requires(const A& a, const B& b) { static_cast<bool>(a < b); }
    constexpr bool operator()(const A& a, const B& b) const { return static_cast<bool>(a < b); }
};

// Ranges at most this long go to std::sort. Sorting 2048 ints takes about 0.1 ms, so the join
// that splits off a piece (tens of ns) is noise, while 10^6 elements still make ~500 pieces to
// balance between workers.
inline constexpr std::size_t k_sort_cutoff = 2048;

// A partition is split between workers only above this size (a fork per half must be worth it),
// and only while the range holds more than 1/workers of the whole: below that, the other workers
// have pieces of their own to sort, and the block swap that joins the halves would be extra work.
inline constexpr std::size_t k_parallel_partition_min = std::size_t{1} << 16;

// The user's comparator by reference: std::sort copies its comparator freely, and the pieces must
// all call the one object the caller passed.
template <class Comp>
struct comparator_ref {
    Comp* comp;
    template <class A, class B>
    bool operator()(A&& a, B&& b) const {
        return static_cast<bool>(ext::invoke(*comp, a, b)); // a and b as lvalues, as std::sort does
    }
};

template <std::random_access_iterator It, class Comp>
class quick_sorter {
public:
    quick_sorter(scheduler& sched, Comp& comp, std::size_t n) noexcept
        : m_sched(sched), m_less{&comp},
          m_parallel_above(std::max(k_parallel_partition_min, n / sched.worker_count())),
          m_piece(std::max(k_parallel_partition_min / 2, n / (2 * sched.worker_count()))) {}

    // budget: how many more partitions may lead here before std::sort takes over.
    void sort(It first, It last, int budget) {
        const auto n = static_cast<std::size_t>(last - first);
        if (n <= k_sort_cutoff || budget == 0) {
            std::sort(first, last, m_less);
            return;
        }
        const It pivot = partition(first, last);
        // The larger side is join's second branch, the one offered to thieves: what a thief takes
        // should be worth the steal.
        It lo_first = first, lo_last = pivot, hi_first = pivot + 1, hi_last = last;
        if (lo_last - lo_first > hi_last - hi_first) {
            std::swap(lo_first, hi_first);
            std::swap(lo_last, hi_last);
        }
        m_sched.join([&] { sort(lo_first, lo_last, budget - 1); },
                     [&] { sort(hi_first, hi_last, budget - 1); });
    }

private:
    bool less(It a, It b) { return m_less(*a, *b); }

    It median_of_3(It a, It b, It c) {
        if (less(a, b))
            return less(b, c) ? b : (less(a, c) ? c : a);
        return less(a, c) ? a : (less(b, c) ? c : b);
    }

    // Hoare's partition of [first, last) (more than k_sort_cutoff elements) around the ninther,
    // with the scans of libstdc++'s std::sort. Returns where the pivot ends: [first, p) holds no
    // element greater than *p and (p, last) no element less. Both scans stop at elements equal
    // to the pivot and swap them, so runs of equal keys (all equal, few distinct values) split
    // in the middle instead of to one side.
    It partition(It first, It last) {
        const auto n = last - first;
        const auto step = n / 8;
        const It mid = first + n / 2;
        const It m = median_of_3(median_of_3(first, first + step, first + 2 * step),
                                 median_of_3(mid - step, mid, mid + step),
                                 median_of_3(last - 1 - 2 * step, last - 1 - step, last - 1));
        std::iter_swap(first, m); // the pivot waits at *first, which neither scan moves
        if (static_cast<std::size_t>(n) > m_parallel_above) {
            const It p = partition_in_parallel(first + 1, last, first) - 1;
            std::iter_swap(first, p);
            return p;
        }

        // The scans test no bound, as std::sort's do not: this loop is the part of the sort that
        // runs before any parallelism, so it is kept as lean as std::sort's. Each scan stops at a
        // sentinel. The first upward scan stops at the latest at the larger of the two other
        // medians, which is not less than the pivot and lies in (first, last); every downward
        // scan at the pivot itself; later scans at the elements the previous swap put behind
        // them. All of which needs comp to be a strict weak order, as std::sort does.
        // Invariant: [first + 1, lo) holds no element greater than the pivot, [hi, last) none
        // less.
        It lo = first + 1;
        It hi = last;
        for (;;) {
            while (less(lo, first))
                ++lo;
            --hi;
            while (less(first, hi))
                --hi;
            if (!(lo < hi))
                break;
            std::iter_swap(lo, hi);
            ++lo;
        }
        const It p = lo - 1; // not greater than the pivot, or first itself
        std::iter_swap(first, p);
        return p;
    }

    // Partitions [lo, hi) around *pivot, which lies outside it, and returns the cut: [lo, cut)
    // holds no element greater than the pivot and [cut, hi) none less. The two halves are
    // partitioned at once, each the same way, which leaves [lo, a) <= | [a, mid) >= |
    // [mid, b) <= | [b, hi) >=; swapping the shorter of the two middle runs with the far end of
    // the other joins them. What this saves is the one partition of the whole range that no
    // other worker can share (docs/algorithms.md#parallel_sort).
    It partition_in_parallel(It lo, It hi, It pivot) {
        if (static_cast<std::size_t>(hi - lo) <= m_piece)
            return partition_piece(lo, hi, pivot);
        const It mid = lo + (hi - lo) / 2;
        const auto [a, b] = m_sched.join([&] { return partition_in_parallel(lo, mid, pivot); },
                                         [&] { return partition_in_parallel(mid, hi, pivot); });
        const auto greater_left = mid - a; // [a, mid)
        const auto less_right = b - mid;   // [mid, b)
        const auto k = std::min(greater_left, less_right);
        std::swap_ranges(a, a + k, b - k); // disjoint: a + k <= mid <= b - k
        return a + less_right;
    }

    // Hoare's partition of one piece around *pivot (outside the piece), with bounded scans: a
    // piece need not hold a sentinel. Equal elements stop both scans, as in partition().
    It partition_piece(It lo, It hi, It pivot) {
        if (lo == hi)
            return lo;
        // Invariant: [lo, i) holds no element greater than the pivot, (j, hi) none less.
        It i = lo;
        It j = hi - 1;
        for (;;) {
            while (i <= j && less(i, pivot))
                ++i;
            while (i <= j && less(pivot, j))
                --j;
            // Either i > j, or i == j and *i is equivalent to the pivot: [i, hi) holds no
            // element less than it.
            if (i >= j)
                return i;
            std::iter_swap(i, j);
            ++i;
            --j;
        }
    }

    scheduler& m_sched;
    comparator_ref<Comp> m_less;
    std::size_t m_parallel_above; // partition() splits ranges larger than this between workers
    std::size_t m_piece;          // into pieces of at most this many elements
};

template <std::random_access_iterator It, class Comp>
void parallel_sort_impl(scheduler& sched, It first, It last, Comp& comp) {
    const std::size_t n = iterator_distance("fj::parallel_sort", first, last);
    ext::check_callable(comp);
    if (n <= k_sort_cutoff) { // less than one piece: no task is worth it
        std::sort(first, last, comparator_ref<Comp>{&comp});
        return;
    }
    quick_sorter<It, Comp> sorter(sched, comp, n);
    const int budget = 2 * (static_cast<int>(std::bit_width(n)) - 1); // introsort's 2 log2(n)
    sched.execute([&] { sorter.sort(first, last, budget); });
}

// A range std::sort can take: random-access, with begin and end of one type.
template <class R>
concept sortable_range = requires(R& r) {
    { std::ranges::begin(r) } -> std::random_access_iterator;
    { std::ranges::end(r) } -> std::same_as<decltype(std::ranges::begin(r))>;
};

template <class R>
using sort_iterator_t = decltype(std::ranges::begin(std::declval<R&>()));

} // namespace detail

// --- iterators -----------------------------------------------------------------------------------

template <std::random_access_iterator It, class Comp>
requires std::sortable < It, std::remove_reference_t<Comp>
& > void parallel_sort(scheduler& sched, It first, It last, Comp&& comp) {
    detail::parallel_sort_impl(sched, first, last, comp);
}

template <std::random_access_iterator It>
requires std::sortable<It, detail::sort_less>
void parallel_sort(scheduler& sched, It first, It last) {
    detail::sort_less comp;
    detail::parallel_sort_impl(sched, first, last, comp);
}

template <std::random_access_iterator It, class Comp>
requires std::sortable < It, std::remove_reference_t<Comp>
& > void parallel_sort(It first, It last, Comp&& comp) {
    detail::parallel_sort_impl(current_scheduler(), first, last, comp);
}

template <std::random_access_iterator It>
requires std::sortable<It, detail::sort_less>
void parallel_sort(It first, It last) {
    detail::sort_less comp;
    detail::parallel_sort_impl(current_scheduler(), first, last, comp);
}

// --- ranges (containers, spans, views with a common end) ----------------------------------------

template <detail::sortable_range R, class Comp>
requires std::sortable < detail::sort_iterator_t<R>, std::remove_reference_t<Comp>
& > void parallel_sort(scheduler& sched, R&& range, Comp&& comp) {
    detail::parallel_sort_impl(sched, std::ranges::begin(range), std::ranges::end(range), comp);
}

template <detail::sortable_range R>
requires std::sortable<detail::sort_iterator_t<R>, detail::sort_less>
void parallel_sort(scheduler& sched, R&& range) {
    detail::sort_less comp;
    detail::parallel_sort_impl(sched, std::ranges::begin(range), std::ranges::end(range), comp);
}

template <detail::sortable_range R, class Comp>
requires std::sortable < detail::sort_iterator_t<R>, std::remove_reference_t<Comp>
& > void parallel_sort(R&& range, Comp&& comp) {
    detail::parallel_sort_impl(current_scheduler(), std::ranges::begin(range),
                               std::ranges::end(range), comp);
}

template <detail::sortable_range R>
requires std::sortable<detail::sort_iterator_t<R>, detail::sort_less>
void parallel_sort(R&& range) {
    detail::sort_less comp;
    detail::parallel_sort_impl(current_scheduler(), std::ranges::begin(range),
                               std::ranges::end(range), comp);
}

} // namespace fj
