// The fixed reduction tree behind fj::parallel_reduce.
//
// Determinism: the range [0, n) is halved while a piece is larger than the grain, and the grain
// depends only on n (or is the caller's), so the leaves and the tree are a function of the input
// alone. Each leaf folds its offsets left to right starting from the identity; each inner node
// combines reduce(left, right). Whether a subtree was stolen changes who computes it, never what
// is computed, so the bits are the same for any worker count and any steal pattern, and an
// associative (not necessarily commutative) reduce gives the serial order's result.
#pragma once

#include "affinity_run.hpp"
#include "loop_failure.hpp"
#include "loop_options.hpp"
#include "offset_partition.hpp"
#include "tracked_run.hpp"

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

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

// A reduction's leaf and its reduce, reached through pointers and functions typed by the result
// alone: leaf(lo, hi, failure) -> T folds [lo, hi) from a copy of the identity and records (not
// throws) its exceptions; reduce(a, b) -> T combines two results. The tree and the drivers below
// are then the same code for every body with the same result type, so a translation unit compiles
// them once per T, and each body adds only its leaf, its reduce and the two functions that call
// them (as loop_driver.hpp's leaf_ref does for parallel_for). One indirect call per leaf and per
// inner node, next to a grain's worth of iterations and a join. Both must outlive the reference.
template <class T>
class reduce_ops {
public:
    template <class Leaf, class Reduce>
    reduce_ops(Leaf& leaf, Reduce& reduce) noexcept
        : m_leaf(erase(leaf)), m_reduce(erase(reduce)), m_call_leaf(&call_leaf<Leaf>),
          m_call_reduce(&call_reduce<Reduce>) {}

    T leaf(std::size_t lo, std::size_t hi, loop_failure& failure) const {
        return m_call_leaf(m_leaf, lo, hi, failure);
    }
    T reduce(T&& left, T&& right) const {
        return m_call_reduce(m_reduce, std::move(left), std::move(right));
    }

private:
    template <class F>
    static void* erase(F& f) noexcept {
        return const_cast<void*>(static_cast<const void*>(std::addressof(f)));
    }
    template <class Leaf>
    static T call_leaf(void* leaf, std::size_t lo, std::size_t hi, loop_failure& failure) {
        return (*static_cast<Leaf*>(leaf))(lo, hi, failure);
    }
    template <class Reduce>
    static T call_reduce(void* reduce, T&& left, T&& right) {
        return ext::invoke(*static_cast<Reduce*>(reduce), std::move(left), std::move(right));
    }

    void* m_leaf;
    void* m_reduce;
    T (*m_call_leaf)(void*, std::size_t, std::size_t, loop_failure&);
    T (*m_call_reduce)(void*, T&&, T&&);
};

template <class T>
class reduce_tree {
public:
    reduce_tree(fj::scheduler& sched, const T& identity, const reduce_ops<T>& ops,
                std::size_t grain, loop_failure& failure) noexcept
        : m_sched(sched), m_identity(identity), m_ops(ops), m_grain(grain), m_failure(failure) {}

    T run(std::size_t lo, std::size_t hi) {
        if (lo >= m_failure.limit())
            return m_identity; // cancelled: the result is discarded
        if (hi - lo <= m_grain)
            return m_ops.leaf(lo, hi, m_failure);
        const std::size_t mid = lo + (hi - lo) / 2;
        auto [left, right] =
            m_sched.join([&]() -> T { return run(lo, mid); }, [&]() -> T { return run(mid, hi); });
        try {
            return m_ops.reduce(std::move(left), std::move(right));
        } catch (...) {
            m_failure.record(lo, std::current_exception());
            return m_identity;
        }
    }

private:
    fj::scheduler& m_sched;
    const T& m_identity;
    const reduce_ops<T>& m_ops;
    std::size_t m_grain;
    loop_failure& m_failure;
};

// The affinity pieces' results combined left to right, as the serial order gives them. A piece
// a failure or a stop cancelled has none; the call then throws and the value is discarded. A
// throwing reduce is recorded at key_of(i), the failure position of the piece it brings in.
template <class T, class KeyOf, class Reduce>
T fold_in_order(std::vector<std::optional<T>>& results, KeyOf key_of, const T& identity,
                Reduce& reduce, loop_failure& failure) {
    std::optional<T> acc;
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (!results[i])
            continue;
        if (!acc) {
            acc.emplace(std::move(*results[i]));
            continue;
        }
        try {
            acc.emplace(ext::invoke(reduce, std::move(*acc), std::move(*results[i])));
        } catch (...) {
            failure.record(key_of(i), std::current_exception());
            return identity;
        }
    }
    return acc ? std::move(*acc) : identity;
}

// Reduces [0, n) on sched as the options' partitioner asks (automatic: the options' grain, else
// the default grain; simple: the grain, else 1; per worker: about n / workers; affinity: offset
// pieces folded in order) and rethrows the lowest-offset failure once every started chunk has
// finished, or throws fj::operation_cancelled naming `who` if the stop token was requested
// meanwhile (as run_loop in loop_driver.hpp).
template <class T>
T run_reduce_with(const char* who, fj::scheduler& sched, std::size_t n, const loop_options& options,
                  const T& identity, const reduce_ops<T>& ops) {
    loop_failure failure;
    if (options.kind == partition::affinity) {
        auto work = [&]() -> T {
            const offset_pieces pieces(n, options.grain, sched.worker_count());
            std::vector<std::optional<T>> results(pieces.count());
            auto run_piece = [&](std::size_t i) {
                const std::size_t lo = pieces.begin_of(i);
                if (lo < failure.limit())
                    results[i].emplace(ops.leaf(lo, pieces.begin_of(i + 1), failure));
            };
            run_with_affinity(sched, *options.affinity, pieces.count(), run_piece);
            auto reduce = [&](T&& left, T&& right) -> T {
                return ops.reduce(std::move(left), std::move(right));
            };
            return fold_in_order(
                results, [&](std::size_t i) { return pieces.begin_of(i); }, identity, reduce,
                failure);
        };
        return run_tracked(who, sched, options.stop, failure, n == 0, identity, work);
    }
    std::size_t grain = fixed_loop_grain(options.kind, n, options.grain, sched.worker_count());
    if (grain == 0)
        grain = default_reduce_grain(n);
    reduce_tree<T> tree(sched, identity, ops, grain, failure);
    auto work = [&]() -> T { return tree.run(0, n); };
    return run_tracked(who, sched, options.stop, failure, n == 0, identity, work);
}

template <class T, class Leaf, class Reduce>
T run_reduce(const char* who, fj::scheduler& sched, std::size_t n, const loop_options& options,
             const T& identity, Leaf& leaf, Reduce& reduce) {
    return run_reduce_with<T>(who, sched, n, options, identity, reduce_ops<T>(leaf, reduce));
}

} // namespace fj::detail
