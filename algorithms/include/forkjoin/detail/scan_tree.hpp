// The two-pass prefix scan behind fj::inclusive_scan, fj::exclusive_scan and fj::parallel_scan.
//
// Blocks: [0, n) is cut into B blocks of equal size (the first n % B one longer), B depending only
// on n and the grain. A fixed binary tree over the block numbers (halving [a, b) at a + (b - a) /
// 2) decides every combine:
//
//   1. Up-sweep: each block is folded left to right into its sum; each inner node stores its left
//      child's sum, in slot m - 1 for the node split at block m (every block boundary is the split
//      of exactly one node, so B - 1 slots), and returns combine(left, right) if its parent needs
//      it. Nodes on the tree's right edge are never a left child: their sums (and the last
//      block's) are not computed.
//   2. Down-sweep: the root gets the initial carry (none, or init); a node gives its left child
//      its own carry and its right child combine(carry, slot); a block is scanned left to right
//      from its carry, writing the outputs.
//
// Work: about 2n + 2B combines against n for a serial scan; span O(n / B + log B). Determinism:
// the blocks, the tree and the order inside every combine are functions of (n, grain) alone; a
// steal changes who computes a node, never what, so the bits are the same for any worker count.
//
// Failures are recorded by position in a loop_failure, as the other loops do: a block's fold or
// scan at the element that threw, a node's combine at the first element of its right child (the
// element that combine brings in). Pass 1 skips blocks at or above the lowest failure; pass 2 then
// still runs the blocks below it (their carries need only blocks below, all of which completed),
// so the caller gets the lowest position that throws in either pass, and the outputs below the
// block of the first failure are written.
#pragma once

#include "loop_failure.hpp"

#include <cstddef>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include <forkjoin/extension.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

// The default scan grain: about 1024 blocks, but none shorter than 1024 elements, so a cheap
// operator's block outweighs the fork/join around it. A function of n alone, for determinism.
constexpr std::size_t default_scan_grain(std::size_t n) noexcept {
    constexpr std::size_t k_blocks = 1024;
    constexpr std::size_t k_min_block = 1024;
    const std::size_t even = n / k_blocks + (n % k_blocks != 0);
    return even < k_min_block ? k_min_block : even;
}

// Leaves supplies the per-block work over element offsets [lo, hi):
//   std::optional<T> sum(lo, hi, failure)                    pass 1: the block's fold
//   std::optional<T> scan(lo, hi, const T* carry, failure)   pass 2: writes the outputs; returns
//                                                            the running value at the block's end
// Each catches what it calls, records it in `failure` and returns std::nullopt.
template <class T, class Leaves, class Combine>
class scan_tree {
public:
    scan_tree(fj::scheduler& sched, std::size_t n, std::size_t grain, Leaves& leaves,
              Combine& combine, loop_failure& failure)
        : m_sched(sched), m_n(n), m_blocks(n / grain + (n % grain != 0)), m_short(n / m_blocks),
          m_long_blocks(n % m_blocks), m_leaves(leaves), m_combine(combine), m_failure(failure),
          m_slots(m_blocks - 1) {}

    // Both passes; the last block's running value, if every block was scanned.
    std::optional<T> run(const T* initial_carry) {
        (void)up(0, m_blocks, false);
        down(0, m_blocks, initial_carry);
        return std::move(m_total);
    }

private:
    // The first element of block k: k * short + min(k, long blocks), without k * n overflowing.
    std::size_t start(std::size_t k) const noexcept {
        return k * m_short + (k < m_long_blocks ? k : m_long_blocks);
    }

    std::optional<T> up(std::size_t a, std::size_t b, bool needed) {
        if (start(a) >= m_failure.limit())
            return std::nullopt; // cancelled: nothing here is read
        if (b - a == 1)
            return needed ? m_leaves.sum(start(a), start(b), m_failure) : std::nullopt;
        const std::size_t m = a + (b - a) / 2;
        auto [left, right] =
            m_sched.join([&] { return up(a, m, true); }, [&] { return up(m, b, needed); });
        if (!left)
            return std::nullopt;
        if (!needed || !right) {
            m_slots[m - 1] = std::move(left);
            return std::nullopt;
        }
        m_slots[m - 1] = *left;
        try {
            return T(ext::invoke(m_combine, std::as_const(*left), std::as_const(*right)));
        } catch (...) {
            m_failure.record(start(m), std::current_exception());
            return std::nullopt;
        }
    }

    void down(std::size_t a, std::size_t b, const T* carry) {
        if (start(a) >= m_failure.limit())
            return;
        if (b - a == 1) {
            const std::size_t limit = m_failure.limit();
            const std::size_t hi = start(b) < limit ? start(b) : limit;
            std::optional<T> last = m_leaves.scan(start(a), hi, carry, m_failure);
            if (b == m_blocks && hi == m_n)
                m_total = std::move(last);
            return;
        }
        const std::size_t m = a + (b - a) / 2;
        // Pass 1 completed every block below the lowest failure, so the slot is set whenever
        // the right child starts below the limit.
        std::optional<T> right_carry;
        if (start(m) < m_failure.limit() && m_slots[m - 1]) {
            try {
                if (carry == nullptr)
                    right_carry.emplace(*m_slots[m - 1]);
                else
                    right_carry.emplace(static_cast<T>(
                        ext::invoke(m_combine, *carry, std::as_const(*m_slots[m - 1]))));
            } catch (...) {
                m_failure.record(start(m), std::current_exception());
            }
        }
        if (!right_carry) {
            down(a, m, carry);
            return;
        }
        const T* rc = &*right_carry;
        m_sched.join([&] { down(a, m, carry); }, [&] { down(m, b, rc); });
    }

    fj::scheduler& m_sched;
    const std::size_t m_n;
    const std::size_t m_blocks;      // >= 1
    const std::size_t m_short;       // elements in a short block
    const std::size_t m_long_blocks; // the first blocks hold one element more
    Leaves& m_leaves;
    Combine& m_combine;
    loop_failure& m_failure;
    // Written in pass 1 by the node that owns the slot, read in pass 2: the joins in between
    // order them.
    std::vector<std::optional<T>> m_slots;
    std::optional<T> m_total; // written by the last block's scan only
};

// Scans [0, n) on sched with the given grain (0 = the default) from `initial_carry` (nullptr:
// none) and rethrows the lowest-position failure once every started block has finished.
template <class T, class Leaves, class Combine>
std::optional<T> run_scan(fj::scheduler& sched, std::size_t n, std::size_t grain,
                          const T* initial_carry, Leaves& leaves, Combine& combine) {
    if (n == 0)
        return std::nullopt;
    loop_failure failure;
    scan_tree<T, Leaves, Combine> tree(sched, n, grain == 0 ? default_scan_grain(n) : grain, leaves,
                                       combine, failure);
    auto run = [&] { return tree.run(initial_carry); };
    std::optional<T> total = sched.on_worker_thread() ? run() : sched.submit(run).get();
    failure.rethrow_if_failed("fj::parallel_scan");
    return total;
}

} // namespace fj::detail
