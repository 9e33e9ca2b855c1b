// The handshake between the threads that arm timers and the one thread that fires them
// (timers.hpp; docs/design/timers.md). Deadlines live in shards, each with its own mutex, so no
// lock is shared by every timed wait of the process; the timer thread sleeps towards the earliest
// deadline of all shards. A thread that arms an entry earlier than that must wake it ("poke"),
// and no other arm may. Two atomics make that decision without a lock the timer thread also takes:
//
//   timer_front  per shard, the earliest deadline armed there (stored under the shard's mutex)
//   timer_plan   the deadline the timer thread sleeps towards, or `looking` while it scans
//
// An arm publishes its shard's new front and then reads the plan: it pokes if its deadline is
// earlier. The timer thread publishes its plan and then reads every front again: it looks again
// if one is earlier. Both pairs are seq_cst (a Dekker pair), so either the arm sees the plan and
// pokes, or the timer thread's second read sees the front. timers instantiates them with
// std_atomics; the model test (test/model/timer_plan_model_test.cpp) with Relacy's.
#pragma once

#include <cstdint>
#include <limits>

#include <forkjoin/detail/atomics.hpp>

namespace fj::detail {

// Deadlines as steady_clock ticks.
using timer_ticks = std::int64_t;
// No deadline: a shard with nothing armed, or a timer thread with nothing to wait for.
inline constexpr timer_ticks k_no_deadline = std::numeric_limits<timer_ticks>::max();

template <class Atomics = std_atomics>
class basic_timer_front {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    // Under the shard's mutex, after every change to its entries: the earliest deadline left
    // (k_no_deadline for none). seq_cst: an arm's store is the first half of its Dekker pair with
    // the timer thread (then basic_timer_plan::must_poke's load); the timer thread's re-read in
    // basic_timer_plan::settle is the other side's load.
    void publish(timer_ticks earliest) noexcept {
        m_earliest.store(earliest, std::memory_order_seq_cst);
    }

    // The timer thread's scan: which shards have entries due, and what to sleep towards. Relaxed:
    // a stale value only makes the scan fire later than it could or plan too early; settle()'s
    // seq_cst re-read is what no arm can slip past.
    timer_ticks hint() const noexcept { return m_earliest.load(std::memory_order_relaxed); }

    // settle()'s re-read. seq_cst: the second half of the timer thread's Dekker pair (its store of
    // the plan, then this load), against publish() then must_poke() on the arm's side.
    timer_ticks earliest() const noexcept { return m_earliest.load(std::memory_order_seq_cst); }

private:
    atomic<timer_ticks> m_earliest{k_no_deadline};
};

template <class Atomics = std_atomics>
class basic_timer_plan {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    // The plan while the timer thread scans: earlier than every deadline, so no arm pokes; the
    // scan's settle() sees what they armed. Also the plan before the thread's first scan.
    static constexpr timer_ticks k_looking = std::numeric_limits<timer_ticks>::min();

    // The timer thread, before it scans the shards. Relaxed: this store only spares arms a poke
    // the scan makes useless; what an arm during the scan published is caught by settle(), whose
    // seq_cst store comes later in this thread's order (an arm that read k_looking read it before
    // that store in the single total order, so its publish precedes settle's re-read).
    void start_looking() noexcept { m_planned.store(k_looking, std::memory_order_relaxed); }

    // The timer thread, after its scan found `next` the earliest deadline of all fronts: plans to
    // sleep until `next`, then reads every front again. True if the plan holds (no front is
    // earlier); false if an arm published an earlier deadline meanwhile, and the thread must scan
    // again. seq_cst store, then seq_cst loads (basic_timer_front::earliest): the Dekker pair with
    // an arm's publish() then must_poke().
    template <class Fronts>
    bool settle(timer_ticks next, const Fronts& fronts) noexcept {
        m_planned.store(next, std::memory_order_seq_cst);
        for (const auto& front : fronts) {
            if (front.earliest() < next)
                return false;
        }
        return true;
    }

    // An arm, after publishing its shard's new front: true if the timer thread may sleep past
    // `deadline`, so the arm must poke it. seq_cst: the second half of the arm's Dekker pair
    // (publish(), then this load), against settle()'s store then re-read.
    bool must_poke(timer_ticks deadline) const noexcept {
        return deadline < m_planned.load(std::memory_order_seq_cst);
    }

private:
    atomic<timer_ticks> m_planned{k_looking};
};

using timer_front = basic_timer_front<>;
using timer_plan = basic_timer_plan<>;

} // namespace fj::detail
