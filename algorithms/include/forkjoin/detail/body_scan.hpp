// The body-style fj::parallel_scan(range, body), oneTBB's imperative scan: a body that
// accumulates a state over the pieces it is given, body(piece, fj::pre_scan_tag) (accumulate
// only) and body(piece, fj::final_scan_tag) (accumulate and write the outputs), plus
// Body(body, fj::split) (a body with the empty state), b.reverse_join(a) (b's state becomes a's
// followed by b's) and b.assign(a) (b's state becomes a's). The protocol and its proof:
// docs/design/body-style-scan.md.
//
// Final mode (final_range): the user's body holds the exact state at the start of the piece it is
// given, and final-scans it. The range is split lazily (range_driver.hpp's range_splitter): a
// right half that starts after its left half has finished, on this worker or on a thief, goes on
// with the user's body, still in final mode. One worker therefore final-scans every piece once,
// in order, with the user's body alone: no pre-scan, no split body.
//
// Pre mode (pre_range): a right half that starts while its left half still runs (stolen, or run
// by a worker waiting inside its left half) gets a body split from the user's, and pre-scans that
// half, splitting it further the same way. Every split in pre mode gives the right half a body of
// its own, made before the fork, so the pre-scan leaves a tree (scan_pending) whose leaves are the
// pieces and whose inner nodes keep the body holding the state at the end of their left half.
//
// Final pass (final_pending): once both halves have finished, the user's body holds the exact
// state at the pre-scanned half's start. Walking the tree, each inner node's left-half body is
// reverse-joined with the exact state at the start its counts begin from, which makes it the
// exact state at its right half's start; then both halves are final-scanned in parallel. The body
// that final-scans the last piece ends with the exact state at the half's end, and the user's body
// takes it (assign).
//
// Failures (loop_failure.hpp, keys as range_driver.hpp's): a piece that throws, in either pass,
// records its key; a split body or a reverse_join that throws records its right half's key. Pieces
// at or above the limit are not started, so every piece before the lowest failure is still
// final-scanned with its exact state, and none after it is started later.
//
// The splitting constructor that makes a stolen half's body runs on the thief while the user's
// body may be running its operator() on the left half (oneTBB documents this for its reduce
// bodies, and its scan splits a stolen half's body the same way): it must not read state that
// operator() writes. In pre mode the split is made before the fork, by the worker that owns the
// body being split.
#pragma once

#include "loop_failure.hpp"
#include "range_driver.hpp"
#include "split_and_continue.hpp"

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include <forkjoin/range.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

// A pre-scanned part of the range waiting for its final scan: a leaf (one piece) or an inner node
// (two halves, the right one pre-scanned by a body of its own). Written by the pre-scan, read by
// the final pass after the join that ends the pre-scan (the join is the happens-before edge).
template <class Range, class Body>
struct scan_pending {
    explicit scan_pending(std::size_t k) noexcept : key(k) {}

    std::size_t key;            // a leaf: its piece's key; an inner node: its right half's key
    std::optional<Range> piece; // set in a leaf
    std::unique_ptr<scan_pending> left; // an inner node's halves; null: not started
    std::unique_ptr<scan_pending> right;
    std::optional<Body> right_body; // the body the right half was pre-scanned with (its origin)
    // The body holding the state at the end of the left half, counted from where the body that
    // pre-scanned the left half started (its origin); null if the left half did not complete.
    Body* left_sum = nullptr;
};

template <class Range, class Body>
class body_scan {
public:
    using pending = scan_pending<Range, Body>;

    body_scan(const range_splitter<Range>& splitter, Body& body) noexcept
        : m_s(splitter), m_body(body) {}

    // Final-scans r with the user's body, which holds the exact state at r's start.
    void final_range(Range& r, std::size_t key, unsigned depth) {
        if (m_s.cancelled_at(key))
            return;
        try {
            if (m_s.should_split(r, depth)) {
                Range right(r, split{});
                const std::size_t rkey = right_key(key, depth);
                // A right half that goes on with the user's body sees the left half's final
                // scans, and so the body's state (docs/design/split-and-continue.md#steps).
                std::optional<Body> origin; // the stolen right half's first body
                std::unique_ptr<pending> tree;
                split_and_continue(
                    m_s.sched(), [&] { final_range(r, key, depth + 1); },
                    [&] { final_range(right, rkey, depth + 1); },
                    [&] {
                        if (m_s.cancelled_at(rkey))
                            return;
                        try {
                            origin.emplace(m_body, split{}); // concurrent with the left half
                        } catch (...) {
                            m_s.failure().record(rkey, std::current_exception());
                            return;
                        }
                        Body* acc = &*origin;
                        tree = pre_range(right, acc, rkey, depth + 1);
                    });
                if (tree != nullptr)
                    finish(*tree, rkey);
                return;
            }
            if (!r.empty())
                m_body(std::as_const(r), final_scan_tag{});
        } catch (...) { // from the body, or from the range's splitting constructor
            m_s.failure().record(key, std::current_exception());
        }
    }

private:
    // The final pass of a stolen right half (key rkey) whose pre-scan left `tree`, once the user's
    // body holds the exact state at its start. Afterwards the user's body holds the state at its
    // end.
    void finish(pending& tree, std::size_t rkey) {
        if (m_s.cancelled_at(rkey))
            return; // the left half failed or a stop came: the body's state is not exact
        Body* end = final_pending(tree, m_body, m_body);
        if (end == nullptr || end == &m_body)
            return;
        try {
            m_body.assign(*end);
        } catch (...) {
            m_s.failure().record(rkey, std::current_exception());
        }
    }

    // Pre-scans r. On entry *acc holds the state from its origin to r's start; on return acc
    // points at the body holding the state from that origin to r's end, or is null if part of r
    // failed or was cancelled. Returns r's pending tree, null if nothing of r was recorded.
    std::unique_ptr<pending> pre_range(Range& r, Body*& acc, std::size_t key, unsigned depth) {
        Body* const start = acc;
        acc = nullptr;
        if (m_s.cancelled_at(key))
            return nullptr;
        try {
            auto node = std::make_unique<pending>(key);
            if (m_s.should_split(r, depth)) {
                Range right(r, split{});
                const std::size_t rkey = right_key(key, depth);
                node->key = rkey;
                Body* left_acc = start;
                Body* right_acc = nullptr;
                try {
                    right_acc = &node->right_body.emplace(*start, split{});
                } catch (...) {
                    m_s.failure().record(rkey, std::current_exception());
                }
                if (right_acc == nullptr) { // the right half is cancelled: the left half alone
                    node->left = pre_range(r, left_acc, key, depth + 1);
                    node->left_sum = left_acc;
                    return node;
                }
                m_s.sched().join(
                    [&] { node->left = pre_range(r, left_acc, key, depth + 1); },
                    [&] { node->right = pre_range(right, right_acc, rkey, depth + 1); });
                node->left_sum = left_acc;
                if (left_acc != nullptr && right_acc != nullptr) {
                    try {
                        right_acc->reverse_join(*left_acc); // origin to the right half's end
                        acc = right_acc;
                    } catch (...) {
                        m_s.failure().record(rkey, std::current_exception());
                    }
                }
                return node;
            }
            node->piece.emplace(r);
            if (!r.empty())
                (*start)(std::as_const(r), pre_scan_tag{});
            acc = start;
            return node;
        } catch (...) { // from the body, the range's splitting constructor or an allocation
            m_s.failure().record(key, std::current_exception());
            return nullptr;
        }
    }

    // Final-scans the pre-scanned pieces of `node`. `body` holds the exact state at node's start,
    // `incoming` the exact state at the origin its left_sums count from (the same body along the
    // left spine of a tree). Returns the body holding the exact state at node's end, or null if a
    // piece of node failed or was cancelled.
    Body* final_pending(pending& node, Body& incoming, Body& body) {
        if (node.piece) {
            if (m_s.cancelled_at(node.key))
                return nullptr;
            try {
                if (!node.piece->empty())
                    body(std::as_const(*node.piece), final_scan_tag{});
                return &body;
            } catch (...) {
                m_s.failure().record(node.key, std::current_exception());
                return nullptr;
            }
        }
        if (node.left == nullptr)
            return nullptr;
        // The right half's exact start state: the left half's, counted from the origin, after the
        // exact state at the origin. Made before the fork, while `incoming` is still unchanged.
        Body* right_start = nullptr;
        if (node.right != nullptr && node.left_sum != nullptr && !m_s.cancelled_at(node.key)) {
            try {
                node.left_sum->reverse_join(incoming);
                right_start = node.left_sum;
            } catch (...) {
                m_s.failure().record(node.key, std::current_exception());
            }
        }
        if (right_start == nullptr) {
            (void)final_pending(*node.left, incoming, body);
            return nullptr;
        }
        Body* left_end = nullptr;
        Body* right_end = nullptr;
        m_s.sched().join(
            [&] { left_end = final_pending(*node.left, incoming, body); },
            [&] { right_end = final_pending(*node.right, *right_start, *right_start); });
        return left_end != nullptr ? right_end : nullptr;
    }

    const range_splitter<Range>& m_s;
    Body& m_body;
};

} // namespace fj::detail
