// The leaves of the prefix scans (parallel_scan.hpp): what one block of an iterator scan or of
// the functional parallel_scan does when scan_tree (scan_tree.hpp) sums it, scans it from its
// carry, or does both in one pass.
#pragma once

#include "index_space.hpp"
#include "loop_failure.hpp"
#include "loop_options.hpp"
#include "scan_tree.hpp"

#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/blocked_range.hpp>
#include <forkjoin/extension.hpp>

namespace fj::detail {

// The iterator scans over element offsets. Exclusive: out[k] is the value before element k.
template <class T, class It, class Out, class Op, bool Exclusive>
class iterator_scan_leaves {
public:
    iterator_scan_leaves(It first, Out out, Op& op) noexcept
        : m_first(first), m_out(out), m_op(op) {}

    std::optional<T> sum(std::size_t lo, std::size_t hi, loop_failure& failure) {
        std::size_t k = lo;
        try {
            It it = at(m_first, lo);
            T acc(*it);
            for (++k, ++it; k < hi; ++k, ++it)
                acc = static_cast<T>(ext::invoke(m_op, std::as_const(acc), *it));
            return acc;
        } catch (...) {
            failure.record(k, std::current_exception());
            return std::nullopt;
        }
    }

    std::optional<T> scan(std::size_t lo, std::size_t hi, const T* carry, loop_failure& failure) {
        std::size_t k = lo;
        try {
            It it = at(m_first, lo);
            Out out = at(m_out, lo);
            if (carry == nullptr) { // the first block of an inclusive scan without init
                T acc(*it);
                *out = acc;
                for (++k, ++it, ++out; k < hi; ++k, ++it, ++out)
                    step(acc, *it, out);
                return acc;
            }
            T acc(*carry);
            for (; k < hi; ++k, ++it, ++out)
                step(acc, *it, out);
            return acc;
        } catch (...) {
            failure.record(k, std::current_exception());
            return std::nullopt;
        }
    }

    // scan from a carry and sum in one pass: each element is read once and feeds both folds.
    std::optional<T> scan_and_sum(std::size_t lo, std::size_t hi, const T& carry,
                                  loop_failure& failure) {
        std::size_t k = lo;
        try {
            It it = at(m_first, lo);
            Out out = at(m_out, lo);
            T acc(carry);
            std::iter_reference_t<It> first = *it;
            T sum(first);
            step(acc, std::forward<std::iter_reference_t<It>>(first), out);
            for (++k, ++it, ++out; k < hi; ++k, ++it, ++out) {
                std::iter_reference_t<It> x = *it;
                sum = static_cast<T>(ext::invoke(m_op, std::as_const(sum), x));
                step(acc, std::forward<std::iter_reference_t<It>>(x), out);
            }
            return sum;
        } catch (...) {
            failure.record(k, std::current_exception());
            return std::nullopt;
        }
    }

private:
    // acc op= x, the element at `out`'s offset, and writes the output there: the value before
    // (exclusive) or after it (inclusive). Uses x before writing *out, which may be the same
    // object; callers fold x into other values before calling it. Each element is dereferenced
    // once per pass.
    void step(T& acc, std::iter_reference_t<It>&& x, const Out& out) {
        if constexpr (Exclusive) {
            T next(static_cast<T>(
                ext::invoke(m_op, std::as_const(acc), std::forward<std::iter_reference_t<It>>(x))));
            *out = acc;
            acc = std::move(next);
        } else {
            acc = static_cast<T>(
                ext::invoke(m_op, std::as_const(acc), std::forward<std::iter_reference_t<It>>(x)));
            *out = acc;
        }
    }

    template <class I>
    static I at(I base, std::size_t k) {
        return base + static_cast<std::iter_difference_t<I>>(k);
    }

    It m_first;
    Out m_out;
    Op& m_op;
};

template <class T, class It, class Out, class Op, bool Exclusive>
Out iterator_scan(scheduler& sched, const char* who, It first, It last, Out out, Op& op,
                  const T* init, const loop_options& options) {
    const std::size_t n = iterator_distance(who, first, last);
    ext::check_callable(op);
    iterator_scan_leaves<T, It, Out, Op, Exclusive> leaves(first, out, op);
    (void)run_scan<T>(who, sched, n, options, init, leaves, op);
    return out + static_cast<std::iter_difference_t<Out>>(n);
}

template <std::integral Index, class T, class Body>
class range_scan_leaves {
public:
    range_scan_leaves(const blocked_range<Index>& range, const T& identity, Body& body) noexcept
        : m_range(range), m_identity(identity), m_body(body) {}

    std::optional<T> sum(std::size_t lo, std::size_t hi, loop_failure& failure) {
        return call(lo, hi, m_identity, false, failure);
    }
    std::optional<T> scan(std::size_t lo, std::size_t hi, const T* carry, loop_failure& failure) {
        return call(lo, hi, carry != nullptr ? *carry : m_identity, true, failure);
    }
    // The body reads a block once per call: final from the carry, then pre from the identity.
    std::optional<T> scan_and_sum(std::size_t lo, std::size_t hi, const T& carry,
                                  loop_failure& failure) {
        if (!call(lo, hi, carry, true, failure))
            return std::nullopt;
        return sum(lo, hi, failure);
    }

private:
    std::optional<T> call(std::size_t lo, std::size_t hi, const T& sum, bool is_final,
                          loop_failure& failure) {
        using U = std::make_unsigned_t<Index>;
        const auto at = [&](std::size_t k) {
            return static_cast<Index>(static_cast<U>(m_range.begin()) + static_cast<U>(k));
        };
        try {
            return T(ext::invoke(m_body, blocked_range<Index>(at(lo), at(hi)), sum, is_final));
        } catch (...) {
            failure.record(lo, std::current_exception());
            return std::nullopt;
        }
    }

    const blocked_range<Index>& m_range;
    const T& m_identity;
    Body& m_body;
};

} // namespace fj::detail
