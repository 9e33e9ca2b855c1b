// The fixed reduction tree behind fj::parallel_reduce.
//
// Determinism: the range [0, n) is halved while a piece is larger than the grain, and the grain
// depends only on n (or is the caller's), so the leaves and the tree are a function of the input
// alone. Each leaf folds its offsets left to right starting from the identity; each inner node
// combines reduce(left, right). Whether a subtree was stolen changes who computes it, never what
// is computed, so the bits are the same for any worker count and any steal pattern, and an
// associative (not necessarily commutative) reduce gives the serial order's result.
#pragma once

#include "loop_failure.hpp"
#include "tracked_run.hpp"

#include <cstddef>
#include <exception>
#include <stop_token>
#include <utility>

#include <forkjoin/extension.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

// The default reduction grain: about 1024 leaves, whatever the worker count (a grain that depended
// on the pool would break determinism). Enough leaves to balance on dozens of workers; few enough
// that fork/join costs vanish against any useful leaf.
constexpr std::size_t default_reduce_grain(std::size_t n) noexcept {
    constexpr std::size_t k_leaves = 1024;
    // ceil(n / k_leaves) without n + k_leaves - 1, which wraps for n near 2^64 (grain 0).
    return n <= k_leaves ? 1 : n / k_leaves + (n % k_leaves != 0);
}

// Leaf: leaf(lo, hi, failure) -> T, folding [lo, hi) from a copy of the identity and recording
// (not throwing) exceptions.
template <class T, class Leaf, class Reduce>
class reduce_tree {
public:
    reduce_tree(fj::scheduler& sched, const T& identity, Leaf& leaf, Reduce& reduce,
                std::size_t grain, loop_failure& failure) noexcept
        : m_sched(sched), m_identity(identity), m_leaf(leaf), m_reduce(reduce), m_grain(grain),
          m_failure(failure) {}

    T run(std::size_t lo, std::size_t hi) {
        if (lo >= m_failure.limit())
            return m_identity; // cancelled: the result is discarded
        if (hi - lo <= m_grain)
            return m_leaf(lo, hi, m_failure);
        const std::size_t mid = lo + (hi - lo) / 2;
        auto [left, right] =
            m_sched.join([&]() -> T { return run(lo, mid); }, [&]() -> T { return run(mid, hi); });
        try {
            return ext::invoke(m_reduce, std::move(left), std::move(right));
        } catch (...) {
            m_failure.record(lo, std::current_exception());
            return m_identity;
        }
    }

private:
    fj::scheduler& m_sched;
    const T& m_identity;
    Leaf& m_leaf;
    Reduce& m_reduce;
    std::size_t m_grain;
    loop_failure& m_failure;
};

// Reduces [0, n) on sched with the given grain (0 = the default grain) and rethrows the
// lowest-offset failure once every started chunk has finished, or throws fj::operation_cancelled
// naming `who` if `stop` was requested meanwhile (as run_loop in loop_driver.hpp).
template <class T, class Leaf, class Reduce>
T run_reduce(const char* who, fj::scheduler& sched, std::size_t n, std::size_t grain,
             const std::stop_token& stop, const T& identity, Leaf& leaf, Reduce& reduce) {
    loop_failure failure;
    reduce_tree<T, Leaf, Reduce> tree(sched, identity, leaf, reduce,
                                      grain == 0 ? default_reduce_grain(n) : grain, failure);
    auto work = [&]() -> T { return tree.run(0, n); };
    return run_tracked(who, sched, stop, failure, n == 0, identity, work);
}

} // namespace fj::detail
