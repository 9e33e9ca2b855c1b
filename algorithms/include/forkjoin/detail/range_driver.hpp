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
// Splitting for parallel_for and the body-style parallel_reduce (the lazy splitting of
// loop_driver.hpp, for ranges): split unconditionally for the first few levels (about 4 pieces
// per worker, as oneTBB's auto_partitioner starts), then split a divisible piece only while this
// worker's own deque is empty, that is while thieves have taken what it exposed; else run the
// piece whole. The functional parallel_reduce instead splits while is_divisible(), a tree that
// depends on the range alone, which keeps it deterministic.
#pragma once

#include "loop_failure.hpp"
#include "tracked_run.hpp"

#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <stop_token>
#include <utility>

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

template <class Range>
class range_splitter {
public:
    range_splitter(fj::scheduler& sched, loop_failure& failure) noexcept
        : m_sched(sched), m_failure(failure), m_eager(eager_split_depth(sched.worker_count())) {}

    bool cancelled_at(std::size_t key) const noexcept { return key >= m_failure.limit(); }
    bool should_split(const Range& r, unsigned depth) const {
        return r.is_divisible() && (depth < m_eager || ext::own_queue_empty());
    }

    fj::scheduler& sched() const noexcept { return m_sched; }
    loop_failure& failure() const noexcept { return m_failure; }

private:
    fj::scheduler& m_sched;
    loop_failure& m_failure;
    unsigned m_eager;
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
            // release / acquire: the left half's updates of `body` are visible to a right half
            // that goes on with it.
            std::atomic<bool> left_done{false};
            std::optional<Body> right_body;
            s.sched().join(
                [&] {
                    reduce_range(s, r, body, key, depth + 1);
                    left_done.store(true, std::memory_order_release);
                },
                [&] {
                    if (left_done.load(std::memory_order_acquire)) {
                        reduce_range(s, right, body, rkey, depth + 1);
                        return;
                    }
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

// The functional parallel_reduce over a range: a fixed tree (split while divisible), each leaf
// folded by chunk(piece, copy of identity), each inner node reduce(left, right).
template <class T, class Range, class Chunk, class Reduce>
class range_reduce_tree {
public:
    range_reduce_tree(fj::scheduler& sched, const T& identity, Chunk& chunk, Reduce& reduce,
                      loop_failure& failure) noexcept
        : m_sched(sched), m_identity(identity), m_chunk(chunk), m_reduce(reduce),
          m_failure(failure) {}

    T run(Range& r, std::size_t key, unsigned depth) {
        if (key >= m_failure.limit())
            return m_identity; // cancelled: the result is discarded
        try {
            if (r.is_divisible()) {
                Range right(r, split{});
                auto [left, rest] = m_sched.join(
                    [&]() -> T { return run(r, key, depth + 1); },
                    [&]() -> T { return run(right, right_key(key, depth), depth + 1); });
                return ext::invoke(m_reduce, std::move(left), std::move(rest));
            }
            if (r.empty())
                return m_identity;
            return ext::invoke(m_chunk, r, T(m_identity));
        } catch (...) {
            m_failure.record(key, std::current_exception());
            return m_identity;
        }
    }

private:
    fj::scheduler& m_sched;
    const T& m_identity;
    Chunk& m_chunk;
    Reduce& m_reduce;
    loop_failure& m_failure;
};

} // namespace fj::detail
