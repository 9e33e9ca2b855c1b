// oneTBB's partitioners: how far parallel_for, parallel_reduce (both forms) and parallel_scan split
// a range, passed as a trailing argument beside the optional std::stop_token.
//
//   fj::parallel_for(fj::blocked_range<int>{0, n, 64}, body, fj::simple_partitioner{});
//   static fj::affinity_partitioner ap;          // kept by the caller, reused on every call
//   fj::parallel_for(fj::blocked_range<int>{0, n}, body, ap);
//
// The rule for a grain (the same in every form and for every range kind): a piece is never split
// once its range is not divisible (a blocked range of at most its grain, in every dimension; a
// custom range whose is_divisible() is false). Beyond that:
//
//   (none), auto_partitioner  where a grain is given (fj::grain, a blocked range made with one,
//                             any custom range, whose is_divisible() is its grain), split until
//                             no piece is divisible: every piece is at most the grain. Without a
//                             grain (an index loop, or a blocked range made without one), split
//                             adaptively (docs/algorithms.md#grain).
//   simple_partitioner        split until no piece is divisible; a blocked range made without a
//                             grain has grain 1 (oneTBB's default grainsize).
//   static_partitioner        about one piece per worker (the range halved until there are at
//                             least as many pieces as workers, or it is not divisible), no further
//                             splitting while the loop runs.
//   affinity_partitioner      (parallel_for and parallel_reduce) about four pieces per worker;
//                             on the next call with the same partitioner object and the same
//                             number of pieces, each piece goes first to the worker that ran it
//                             the time before (cache reuse across frames). A worker that arrives
//                             while its own pieces are done, or whose worker is busy, takes the
//                             others' pieces: nothing waits for a particular worker.
//
// parallel_scan takes simple_partitioner and auto_partitioner, as oneTBB's does.
#pragma once

#include <cstddef>
#include <vector>

namespace fj {

struct simple_partitioner {};
struct auto_partitioner {};
struct static_partitioner {};

namespace detail {
struct affinity_record_access;
} // namespace detail

// Not copyable: the record belongs to one loop site. Pass it by (non-const) reference; one loop
// at a time may use it.
class affinity_partitioner {
public:
    affinity_partitioner() = default;
    affinity_partitioner(const affinity_partitioner&) = delete;
    affinity_partitioner& operator=(const affinity_partitioner&) = delete;

private:
    friend struct detail::affinity_record_access;
    std::size_t m_workers = 0;           // the pool's size when the record was made
    std::vector<std::size_t> m_previous; // per piece, the worker that ran it last time
};

} // namespace fj
