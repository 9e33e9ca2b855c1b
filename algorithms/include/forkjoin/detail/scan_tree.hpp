// The prefix scan behind fj::inclusive_scan, fj::exclusive_scan and fj::parallel_scan: one pass
// over the blocks whose carry is known when they start, two over the others, with results that do
// not depend on which was which (docs/design/scan.md).
//
// What is computed (a function of n and the grain alone, hence the same bits on any number of
// workers): [0, n) is cut into B blocks of equal size (the first n % B one longer). Block k's sum
// s_k is its fold from its first element, left to right. The carries are the left fold of the
// block sums: c_0 is the initial carry (none, or init), c_{k+1} = c_k op s_k (s_0 when there is no
// c_0). Block k's outputs run from c_k, left to right.
//
// How (the steps of design/scan.md), for a range of blocks [a, b) whose carry is known:
//   1. One block: scanned from its carry in one pass; each element is read once and feeds two
//      folds, the outputs' from the carry and the block's own sum, which makes the next carry.
//   2. Several: halved; the left half is scanned from the carry (by this worker, inline) and
//      yields the right half's carry.
//   3. The right half, when it starts after the left half has finished (the usual case: not
//      stolen, or stolen late), goes on as 1-2 from that carry. One that starts while its left
//      half still runs (stolen) cannot know its carry: it only sums its blocks (read-only, in
//      parallel, recursively halved).
//   4. After both halves have joined, the carries of the summed blocks are the left fold of their
//      sums from the left half's carry (a chain of one combine per block), and the blocks are then
//      scanned from them in parallel.
// One worker never takes step 3: every block is read once. The block sums a one-pass block
// computes (two folds per element) cost work, not memory traffic; the last block's sum is never
// needed and never computed.
//
// Failures are recorded by position in a loop_failure, as the other loops do: a block's fold or
// scan at the element that threw, a carry's combine at the first element of the block it is
// for. Blocks at or above the lowest failure are not started; every block below it still gets
// its carry (which needs blocks below it only) and its outputs, so the caller gets the lowest
// position that throws and the outputs below the block of the first failure.
#pragma once

#include "loop_failure.hpp"
#include "loop_options.hpp"
#include "split_and_continue.hpp"
#include "tracked_run.hpp"

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

// Leaves supplies the per-block work over element offsets [lo, hi); each catches what it calls,
// records it in `failure` and returns std::nullopt:
//   std::optional<T> sum(lo, hi, failure)              the block's sum (reads only)
//   std::optional<T> scan(lo, hi, const T* carry, failure)
//                     writes the outputs from `carry` (nullptr: none, the first element starts
//                     the fold); returns the running value at the block's end
//   std::optional<T> scan_and_sum(lo, hi, const T& carry, failure)
//                     writes the outputs from `carry`; returns the block's sum, bit for bit what
//                     sum(lo, hi) returns
// With no carry, the running value at the end of a block is its sum.
template <class T, class Leaves, class Combine>
class scan_tree {
public:
    scan_tree(fj::scheduler& sched, std::size_t n, std::size_t grain, Leaves& leaves,
              Combine& combine, loop_failure& failure)
        : m_sched(sched), m_n(n), m_blocks(n / grain + (n % grain != 0)), m_short(n / m_blocks),
          m_long_blocks(n % m_blocks), m_leaves(leaves), m_combine(combine), m_failure(failure) {}

    // The running value at the last block's end, if every block was scanned.
    std::optional<T> run(const T* initial_carry) {
        (void)scan_known(0, m_blocks, initial_carry);
        return std::move(m_total);
    }

private:
    // The first element of block k: k * short + min(k, long blocks), without k * n overflowing.
    std::size_t start(std::size_t k) const noexcept {
        return k * m_short + (k < m_long_blocks ? k : m_long_blocks);
    }
    bool cancelled(std::size_t k) const noexcept { return start(k) >= m_failure.limit(); }
    // Where block k's work ends: its last element, or the failure limit if that fell inside it
    // (at or before its start: the block does nothing).
    std::size_t block_end(std::size_t k) const noexcept {
        const std::size_t limit = m_failure.limit();
        return start(k + 1) < limit ? start(k + 1) : limit;
    }

    // carry op sum, recorded at block k's first element if it throws.
    std::optional<T> next_carry(const T& carry, const std::optional<T>& sum, std::size_t k) {
        if (!sum)
            return std::nullopt;
        try {
            return T(ext::invoke(m_combine, carry, *sum));
        } catch (...) {
            m_failure.record(start(k), std::current_exception());
            return std::nullopt;
        }
    }

    // Steps 1-3: scans blocks [a, b) from `carry` (block a's) and returns block b's carry (nullopt
    // if b is the last block, where the total is kept instead, or after a failure).
    std::optional<T> scan_known(std::size_t a, std::size_t b, const T* carry) {
        if (cancelled(a))
            return std::nullopt;
        if (b - a == 1)
            return scan_block(a, carry);
        const std::size_t m = a + (b - a) / 2;
        std::optional<T> mid_carry;
        std::optional<T> end_carry;
        // A right half that goes on from mid_carry reads it after the left half wrote it; one
        // that only sums its blocks leaves mid_carry to its continuation, after the join
        // (docs/design/split-and-continue.md#steps).
        bool summed = false;
        split_and_continue(
            m_sched, [&] { mid_carry = scan_known(a, m, carry); },
            [&] {
                if (mid_carry)
                    end_carry = scan_known(m, b, &*mid_carry);
            },
            [&] {
                summed = true;
                sum_blocks(m, b);
            });
        if (summed && mid_carry)
            end_carry = scan_summed(m, b, *mid_carry);
        return end_carry;
    }

    // One block from a known carry; its sum only where a later block needs it.
    std::optional<T> scan_block(std::size_t k, const T* carry) {
        const std::size_t hi = block_end(k);
        if (hi <= start(k)) // the limit fell to this block's start since the check
            return std::nullopt;
        if (k + 1 == m_blocks || carry == nullptr) {
            std::optional<T> last = m_leaves.scan(start(k), hi, carry, m_failure);
            if (k + 1 == m_blocks) {
                if (hi == m_n)
                    m_total = std::move(last);
                return std::nullopt;
            }
            return hi == start(k + 1) ? std::move(last) : std::nullopt;
        }
        std::optional<T> sum = m_leaves.scan_and_sum(start(k), hi, *carry, m_failure);
        if (hi != start(k + 1))
            return std::nullopt;
        return next_carry(*carry, sum, k + 1);
    }

    // Step 3: the sums of blocks [a, b), but for the last block's, which no carry needs.
    void sum_blocks(std::size_t a, std::size_t b) {
        if (cancelled(a))
            return;
        if (b - a == 1) {
            if (a + 1 < m_blocks && start(a + 1) <= m_failure.limit())
                m_slots[a] = m_leaves.sum(start(a), start(a + 1), m_failure);
            return;
        }
        const std::size_t m = a + (b - a) / 2;
        m_sched.join([&] { sum_blocks(a, m); }, [&] { sum_blocks(m, b); });
    }

    // Step 4: blocks [a, b) were summed; turns their sums into their carries, left to right from
    // `carry` (block a's), scans them in parallel, and returns block b's carry.
    std::optional<T> scan_summed(std::size_t a, std::size_t b, const T& carry) {
        std::optional<T> running(carry);
        std::size_t ready = a; // blocks [a, ready) have their carry in their slot
        while (ready < b && running && !cancelled(ready)) {
            // No block follows the last one, so it needs no sum and ends the chain.
            std::optional<T> next = ready + 1 < m_blocks
                                        ? next_carry(*running, m_slots[ready], ready + 1)
                                        : std::nullopt;
            m_slots[ready++] = std::move(running);
            running = std::move(next);
        }
        if (ready > a)
            scan_from_slots(a, ready);
        return ready == b ? std::move(running) : std::nullopt;
    }

    void scan_from_slots(std::size_t a, std::size_t b) {
        if (cancelled(a))
            return;
        if (b - a == 1) {
            const std::size_t hi = block_end(a);
            if (hi <= start(a))
                return;
            std::optional<T> last = m_leaves.scan(start(a), hi, &*m_slots[a], m_failure);
            if (a + 1 == m_blocks && hi == m_n)
                m_total = std::move(last);
            return;
        }
        const std::size_t m = a + (b - a) / 2;
        m_sched.join([&] { scan_from_slots(a, m); }, [&] { scan_from_slots(m, b); });
    }

    fj::scheduler& m_sched;
    const std::size_t m_n;
    const std::size_t m_blocks;      // >= 1
    const std::size_t m_short;       // elements in a short block
    const std::size_t m_long_blocks; // the first blocks hold one element more
    Leaves& m_leaves;
    Combine& m_combine;
    loop_failure& m_failure;
    // Block k's sum (step 3), then its carry (step 4), for summed blocks only. Each slot is
    // written and read by tasks that a join orders.
    std::vector<std::optional<T>> m_slots = std::vector<std::optional<T>>(m_blocks);
    std::optional<T> m_total; // written by the last block's scan only
};

// Scans [0, n) on sched with the options' grain (0 = the default) from `initial_carry` (nullptr:
// none), stopping early on the options' stop token, and rethrows the lowest-position failure
// (or fj::operation_cancelled naming `who`) once every started block has finished.
template <class T, class Leaves, class Combine>
std::optional<T> run_scan(const char* who, fj::scheduler& sched, std::size_t n,
                          const loop_options& options, const T* initial_carry, Leaves& leaves,
                          Combine& combine) {
    loop_failure failure;
    const std::size_t grain = options.grain == 0 ? default_scan_grain(n) : options.grain;
    auto run = [&] {
        scan_tree<T, Leaves, Combine> tree(sched, n, grain, leaves, combine, failure);
        return tree.run(initial_carry);
    };
    return run_tracked<std::optional<T>>(who, sched, options.stop, failure, n == 0, std::nullopt,
                                         run);
}

} // namespace fj::detail
