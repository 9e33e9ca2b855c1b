// fj::parallel_scan(range, body): oneTBB's body-style scan, for any splittable range
// (range.hpp). Included by <forkjoin/parallel_scan.hpp>.
//
//   struct prefix_sum {
//       const double* in; double* out; double sum = 0;
//       prefix_sum(const double* i, double* o) : in(i), out(o) {}
//       prefix_sum(prefix_sum& b, fj::split) : in(b.in), out(b.out) {}
//       template <class Tag>
//       void operator()(const fj::blocked_range<std::size_t>& r, Tag) {
//           double s = sum;
//           for (std::size_t i = r.begin(); i != r.end(); ++i) {
//               s += in[i];
//               if (Tag::is_final_scan()) out[i] = s;
//           }
//           sum = s;
//       }
//       void reverse_join(prefix_sum& left) { sum = left.sum + sum; }
//       void assign(prefix_sum& b) { sum = b.sum; }
//   };
//   prefix_sum body(in, out);
//   fj::parallel_scan(fj::blocked_range<std::size_t>{0, n}, body); // body.sum: the total
//
// The body: body(piece, fj::pre_scan_tag) accumulates a piece into the body's state;
// body(piece, fj::final_scan_tag) accumulates it and writes its outputs; Body(b, fj::split) makes a
// body with the empty state (it may run while b's operator() runs on another thread: it must not
// read what operator() writes); b.reverse_join(a) makes b's state a's followed by b's (a is only
// read); b.assign(a) copies a's state into b. piece is a const Range&.
//
// What the call promises: every element is final-scanned exactly once, each piece in order and
// with the exact state of everything before it; on return `body` holds the state of the whole
// range. Some pieces are also pre-scanned first (those a thief took while the pieces before them
// still ran): a cost only, the results do not depend on it. One worker final-scans the pieces in
// order with `body` alone: no pre-scan and no split. Not deterministic for a non-associative
// state (floating-point sums): how pieces are grouped depends on stealing.
//
// Options: a std::stop_token last; a stop request made before the call returns ends it with
// fj::operation_cancelled. A blocked range carries its own grain (no fj::grain). Exceptions: the
// one from the first piece in serial order that threw wins (a split body or a reverse_join counts
// at the right half it starts); pieces before it are still final-scanned, none after it is
// started later. Also takes a fj::scheduler& first. Protocol: docs/design/body-style-scan.md.
#pragma once

#include "detail/body_scan.hpp"
#include "detail/loop_failure.hpp"
#include "detail/loop_options.hpp"
#include "detail/range_driver.hpp"
#include "detail/tracked_run.hpp"
#include "grain.hpp"
#include "range.hpp"

#include <concepts>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/async.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj {

namespace detail {

template <class Body, class Range>
concept tagged_scan_body = requires(Body& body, const Range& piece) {
    body(piece, pre_scan_tag{});
    body(piece, final_scan_tag{});
};

// Everything parallel_scan(range, body) calls on a body; each part is also asserted on its own,
// with a message naming it.
template <class Body, class Range>
concept scan_body = tagged_scan_body<Body, Range> && std::constructible_from<Body, Body&, split> &&
    requires(Body& a, Body& b) {
    a.reverse_join(b);
    a.assign(b);
};

template <class Range, class Body>
void parallel_scan_body(scheduler& sched, const Range& range, const loop_options& options,
                        Body& body) {
    loop_failure failure;
    range_splitter<Range> splitter(sched, failure, split_rule_for(options.kind, range));
    body_scan<Range, Body> scan(splitter, body);
    auto work = [&] {
        Range whole(range);
        scan.final_range(whole, 0, 0);
        return true;
    };
    run_tracked("fj::parallel_scan", sched, options.stop, failure, range.empty(), false, work);
}

} // namespace detail

template <splittable_range Range, class Body, detail::loop_option... Opts>
requires(!std::is_const_v<Body>) void parallel_scan(scheduler& sched, const Range& range,
                                                    Body& body, Opts&&... options) {
    static_assert(detail::tagged_scan_body<Body, Range>,
                  "fj::parallel_scan(range, body): body must be callable as "
                  "body(piece, fj::pre_scan_tag) and body(piece, fj::final_scan_tag) with piece a "
                  "const reference to the range's type (typically one template "
                  "operator()(const Range&, Tag))");
    static_assert(std::constructible_from<Body, Body&, split>,
                  "fj::parallel_scan(range, body): Body needs a splitting constructor "
                  "Body(Body& other, fj::split) that makes a body with the empty state");
    static_assert(
        requires(Body & a, Body & b) { a.reverse_join(b); },
        "fj::parallel_scan(range, body): Body needs a member reverse_join(Body& left) that makes "
        "*this hold left's state followed by its own");
    static_assert(
        requires(Body & a, Body & b) { a.assign(b); },
        "fj::parallel_scan(range, body): Body needs a member assign(Body& other) that copies "
        "other's state into *this");
    static_assert(detail::count_of<grain, Opts...> == 0,
                  "fj::parallel_scan: a range carries its own grain; write "
                  "fj::blocked_range<T>{begin, end, grain} instead of passing fj::grain");
    static_assert(detail::no_static_or_affinity<Opts...>,
                  "fj::parallel_scan takes fj::simple_partitioner or fj::auto_partitioner (as "
                  "oneTBB's does), not static_partitioner or affinity_partitioner");
    if constexpr (detail::scan_body<Body, Range>) // else only the static_asserts' messages
        detail::parallel_scan_body(sched, range,
                                   detail::make_loop_options(std::forward<Opts>(options)...), body);
}

template <splittable_range Range, class Body, detail::loop_option... Opts>
requires(!std::is_const_v<Body>) void parallel_scan(const Range& range, Body& body,
                                                    Opts&&... options) {
    parallel_scan(current_scheduler(), range, body, std::forward<Opts>(options)...);
}

} // namespace fj
