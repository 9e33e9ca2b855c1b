// Split and continue: the fork under which the body-style reduce, the body-style scan and the
// prefix scans let a right half go on from what its left half leaves (a body, a body's state, a
// carry) when the left half has finished by the time the right half starts, and do something
// that needs nothing from it otherwise (split a body, pre-scan, only sum). The argument in full:
// docs/design/split-and-continue.md.
//
// Invariant: after_left() runs only when every effect of left(), the tasks it joined included,
// happens before it. beside_left() runs when left() may still be running, so it uses nothing
// left() writes (it may read what may be read concurrently, such as a body by its splitting
// constructor). Exactly one of the two runs, once, as the right side of one join; when the call
// returns, left() and that one have finished and everything they did happens before the caller's
// next statement.
//
// Steps:
//   1. sched.join(left side, right side), with the flag false on this frame (the join returns
//      only after both sides, so the flag outlives them).
//   2. Left side: left(), then the flag's store of true (release). The store follows left()'s
//      last effect: every join inside left() has returned, ordering its right side before it.
//   3. Right side, first thing: the flag's load (acquire). True: it read step 2's store, so
//      everything left() did happens before it: after_left(). False: left() may still run (a
//      thief took the right side, or this worker runs it while waiting inside left()):
//      beside_left(). A false read of a store already made only costs the slower branch.
//   4. After the join, both sides are ordered before the caller by the join itself: what either
//      branch left behind (a split body, a pending tree, block sums) is read there.
// The release (step 2) / acquire (step 3) pair is the only synchronisation this adds to the join:
// relaxed would let after_left() race with left()'s last writes; seq_cst would order nothing more
// (one flag, one writer, one reader).
//
// The three callables are moved into the join's two sides, so each side reaches their captures
// directly, as a lambda written in place of the call would.
//
// With one worker the right side is popped back by the worker that ran left(), after it
// returned: the flag is always true and beside_left() never runs. If left() throws, the store is
// skipped: a right side not yet started is cancelled by the join, one a thief took reads false.
#pragma once

#include <atomic>
#include <utility>

#include <forkjoin/extension.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

// Scheduler is fj::scheduler (the model test passes one of its own whose join() runs the right
// side on a second modelled thread); Atomics is the seam (docs/design/models.md).
template <class Atomics = fj::ext::std_atomics, class Scheduler, class Left, class AfterLeft,
          class BesideLeft>
void split_and_continue(Scheduler& sched, Left left, AfterLeft after_left, BesideLeft beside_left) {
    typename Atomics::template atomic<bool> left_done{false};
    sched.join(
        [&left_done, left = std::move(left)]() mutable {
            left();
            left_done.store(true, std::memory_order_release); // pairs with the load below
        },
        [&left_done, after_left = std::move(after_left),
         beside_left = std::move(beside_left)]() mutable {
            if (left_done.load(std::memory_order_acquire)) // pairs with the store above
                after_left();
            else
                beside_left();
        });
}

} // namespace fj::detail
