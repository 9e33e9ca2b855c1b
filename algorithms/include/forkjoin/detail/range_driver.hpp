// How parallel_for and parallel_reduce split a user's splittable range (range.hpp), which, unlike
// an index range, can only be halved, never cut at an offset.
//
// Positions: a piece's key is its place in the serial order as a binary fraction: the whole range
// is 0, and splitting at depth d gives the right half the key with bit 63 - d set. A piece's key
// is below every key of the pieces after it, so the loop_failure limit (loop_failure.hpp) works on
// keys as it does on offsets: the exception rethrown is the one from the first piece in serial
// order that threw, and a stop request (limit 0) stops every piece. Below depth 63 keys stop
// growing; ties then only blur which of two deep neighbours wins.
//
// Splitting (partitioner.hpp's rule): a piece that is not divisible is never split. Beyond that a
// splitter follows one of three rules:
// - to_grain: split while divisible (simple_partitioner; the automatic rule for a range with a
//   grain: any custom range, a blocked range made with one). The functional parallel_reduce
//   always splits so, a tree that depends on the range alone, which keeps it deterministic.
// - lazy: the automatic rule for a blocked range (1-3D) made without a grain. Split
//   unconditionally for the first few levels (about 4 pieces per worker, as oneTBB's
//   auto_partitioner starts), then split a divisible piece only while this worker's own deque is
//   empty, that is while thieves have taken what it exposed; else run the piece whole.
// - to_depth: split the first ceil(log2(workers)) levels only (static_partitioner): about one
//   piece per worker.
// An affinity_partitioner cuts the range into pieces before anything runs (range_pieces below).
#pragma once

#include "affinity_run.hpp"
#include "loop_failure.hpp"
#include "loop_options.hpp"
#include "split_and_continue.hpp"
#include "tracked_run.hpp"

#include <cstddef>
#include <exception>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

#include <forkjoin/blocked_range.hpp>
#include <forkjoin/blocked_range2d.hpp>
#include <forkjoin/blocked_range3d.hpp>
#include <forkjoin/extension.hpp>
#include <forkjoin/range.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

constexpr std::size_t right_key(std::size_t key, unsigned depth) noexcept {
    return depth < 63 ? key | (std::size_t{1} << (63 - depth)) : key;
}

// Levels split before the lazy rule takes over: ceil(log2(4 * workers)); 0 for one worker.
inline unsigned eager_split_depth(std::size_t workers) noexcept {
    if (workers <= 1)
        return 0;
    unsigned depth = 0;
    while ((std::size_t{1} << depth) < 4 * workers && depth < 16)
        ++depth;
    return depth;
}

// ceil(log2(pieces)): the levels that halve a range into at least `pieces` pieces.
inline unsigned depth_for_pieces(std::size_t pieces) noexcept {
    unsigned depth = 0;
    while ((std::size_t{1} << depth) < pieces && depth < 32)
        ++depth;
    return depth;
}

// Whether a range carries a grain: fj's blocked ranges when made with one (in every dimension),
// any other range always (its is_divisible() is its grain).
template <class R>
struct range_grain {
    static bool given(const R&) noexcept { return true; }
};
template <blocked_range_value V>
struct range_grain<blocked_range<V>> {
    static bool given(const blocked_range<V>& r) noexcept { return r.grain() != 0; }
};
template <blocked_range_value A, blocked_range_value B>
struct range_grain<blocked_range2d<A, B>> {
    static bool given(const blocked_range2d<A, B>& r) noexcept {
        return r.rows().grain() != 0 && r.cols().grain() != 0;
    }
};
template <blocked_range_value A, blocked_range_value B, blocked_range_value C>
struct range_grain<blocked_range3d<A, B, C>> {
    static bool given(const blocked_range3d<A, B, C>& r) noexcept {
        return r.pages().grain() != 0 && r.rows().grain() != 0 && r.cols().grain() != 0;
    }
};

enum class split_rule { to_grain, lazy, to_depth };

// The rule partitioner `kind` gives a range form over `range` (affinity: the rule its pieces'
// count is found by, see range_pieces).
template <class Range>
split_rule split_rule_for(partition kind, const Range& range) noexcept {
    switch (kind) {
    case partition::simple:
        return split_rule::to_grain;
    case partition::per_worker:
        return split_rule::to_depth;
    default:
        return range_grain<Range>::given(range) ? split_rule::to_grain : split_rule::lazy;
    }
}

template <class Range>
class range_splitter {
public:
    range_splitter(fj::scheduler& sched, loop_failure& failure, split_rule rule) noexcept
        : m_sched(sched), m_failure(failure), m_rule(rule),
          m_depth(rule == split_rule::to_depth ? depth_for_pieces(sched.worker_count())
                                               : eager_split_depth(sched.worker_count())) {}

    bool cancelled_at(std::size_t key) const noexcept { return key >= m_failure.limit(); }
    bool should_split(const Range& r, unsigned depth) const {
        if (!r.is_divisible())
            return false;
        switch (m_rule) {
        case split_rule::to_grain:
            return true;
        case split_rule::to_depth:
            return depth < m_depth;
        default:
            return depth < m_depth || ext::own_queue_empty();
        }
    }

    fj::scheduler& sched() const noexcept { return m_sched; }
    loop_failure& failure() const noexcept { return m_failure; }

private:
    fj::scheduler& m_sched;
    loop_failure& m_failure;
    split_rule m_rule;
    unsigned m_depth; // to_depth: the levels to split; lazy: the levels split before the rule
};

// An affinity_partitioner's pieces of a range: halved breadth-first to depth
// ceil(log2(4 * workers)) while divisible, kept in serial order with their keys (the binary
// fractions above), so that the same range gives the same pieces on every call.
template <class Range>
struct range_pieces {
    std::vector<Range> pieces;
    std::vector<std::size_t> keys;

    range_pieces(const Range& whole, std::size_t workers) {
        pieces.push_back(whole);
        keys.push_back(0);
        const unsigned depth = depth_for_pieces(affinity_piece_target(workers));
        for (unsigned d = 0; d < depth; ++d) {
            std::vector<Range> next;
            std::vector<std::size_t> next_keys;
            next.reserve(pieces.size() * 2);
            for (std::size_t i = 0; i < pieces.size(); ++i) {
                next.push_back(pieces[i]);
                next_keys.push_back(keys[i]);
                if (next.back().is_divisible()) {
                    next.emplace_back(next.back(), split{});
                    next_keys.push_back(right_key(keys[i], d));
                }
            }
            pieces.swap(next);
            keys.swap(next_keys);
        }
    }
};

// parallel_for over a range: body(piece) for pieces covering it, each exactly once.
template <class Range, class Body>
void for_range(const range_splitter<Range>& s, Range& r, Body& body, std::size_t key,
               unsigned depth) {
    if (s.cancelled_at(key))
        return;
    try {
        if (s.should_split(r, depth)) {
            Range right(r, split{});
            s.sched().join([&] { for_range(s, r, body, key, depth + 1); },
                           [&] { for_range(s, right, body, right_key(key, depth), depth + 1); });
            return;
        }
        if (!r.empty())
            ext::invoke(body, r);
    } catch (...) { // from the body, or from the range's splitting constructor
        s.failure().record(key, std::current_exception());
    }
}

// The body-style parallel_reduce: `body` accumulates the pieces it is given, in serial order. A
// right half that runs after its left half has finished (not stolen, or stolen late) goes on with
// the same body: contiguous pieces on one worker share one body. A right half that starts while
// its left half still runs gets a body split from it (Body(body, split), which oneTBB also runs
// concurrently with the original's operator() and join), joined back after both halves.
template <class Range, class Body>
void reduce_range(const range_splitter<Range>& s, Range& r, Body& body, std::size_t key,
                  unsigned depth) {
    if (s.cancelled_at(key))
        return;
    try {
        if (s.should_split(r, depth)) {
            Range right(r, split{});
            const std::size_t rkey = right_key(key, depth);
            // A right half that goes on with `body` sees the left half's updates of it
            // (docs/design/split-and-continue.md#steps).
            std::optional<Body> right_body;
            split_and_continue(
                s.sched(), [&] { reduce_range(s, r, body, key, depth + 1); },
                [&] { reduce_range(s, right, body, rkey, depth + 1); },
                [&] {
                    try {
                        right_body.emplace(body, split{});
                    } catch (...) {
                        s.failure().record(rkey, std::current_exception());
                        return;
                    }
                    reduce_range(s, right, *right_body, rkey, depth + 1);
                });
            if (right_body && !s.cancelled_at(rkey)) {
                try {
                    body.join(*right_body);
                } catch (...) {
                    s.failure().record(key, std::current_exception());
                }
            }
            return;
        }
        if (!r.empty())
            ext::invoke(body, r);
    } catch (...) {
        s.failure().record(key, std::current_exception());
    }
}

// The functional parallel_reduce over a range: a fixed tree (split as the splitter's rule says,
// to_grain or to_depth, never lazy), each leaf folded by chunk(piece, copy of identity), each
// inner node reduce(left, right).
template <class T, class Range, class Chunk, class Reduce>
class range_reduce_tree {
public:
    range_reduce_tree(const range_splitter<Range>& s, const T& identity, Chunk& chunk,
                      Reduce& reduce) noexcept
        : m_s(s), m_identity(identity), m_chunk(chunk), m_reduce(reduce) {}

    T run(Range& r, std::size_t key, unsigned depth) {
        if (m_s.cancelled_at(key))
            return m_identity; // cancelled: the result is discarded
        try {
            if (m_s.should_split(r, depth)) {
                Range right(r, split{});
                auto [left, rest] = m_s.sched().join(
                    [&]() -> T { return run(r, key, depth + 1); },
                    [&]() -> T { return run(right, right_key(key, depth), depth + 1); });
                return ext::invoke(m_reduce, std::move(left), std::move(rest));
            }
            return leaf(r);
        } catch (...) {
            m_s.failure().record(key, std::current_exception());
            return m_identity;
        }
    }

    // One piece folded from a copy of the identity (an empty piece gives the identity).
    T leaf(Range& r) {
        if (r.empty())
            return m_identity;
        return ext::invoke(m_chunk, r, T(m_identity));
    }

private:
    const range_splitter<Range>& m_s;
    const T& m_identity;
    Chunk& m_chunk;
    Reduce& m_reduce;
};

} // namespace fj::detail
