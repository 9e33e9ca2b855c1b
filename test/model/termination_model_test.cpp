// The termination invariant's counting (runtime/src/state/active_count.hpp) under Relacy: a
// thread outside the pool runs a call as a caller (runtime/src/callers/callers.cpp) while the
// pool closes and its last worker goes idle. The pool never stops while work of the caller's is
// pending: whatever the caller forked and handed over when it left runs, or a worker that left
// the count without stopping is woken to run it. docs/design/callers.md#model says what is
// covered and what is abstracted.
#include "model/model_support.hpp"
#include "state/active_count.hpp"
#include "state/injection_queue.hpp"

#include <forkjoin/detail/chase_lev_deque.hpp>

namespace {

using fj::model::access;
using fj::model::mutant;
using fj::model::relacy_atomics;

struct item {
    relacy_atomics::atomic<item*> m_next{nullptr}; // the injection queue's link
    rl::var<int> payload;
};

// Thread 0, the caller: enter (steps 1-2); if admitted, fork one task onto its deque and return
// without joining it: at leave (step 5) whatever is still on the deque goes to the injection
// queue, with a wake-up; then uncount (step 7), waking everyone if it was the last one out of a
// closed pool. Refused: uncount the same way.
// Thread 1, shutdown(): close the queue, then wake every sleeper.
// Thread 2, the pool's one worker, counted from the start: go idle as sleep.cpp does (the
// prewait's epoch, the closed flag, the re-check of the queue and the caller's deque, which may
// find the task and run it and look again), then leave the count: the last one out of a closed,
// drained pool stops it.
// The wake-ups are an epoch, as the event count's: a worker that left the count without stopping
// is woken if the epoch moved past the one it read before its re-check.
// SecondLook: the last one out looks at the queues again after its decrement (the protocol);
// without it, the last worker's re-check can be older than work a caller handed over before
// leaving the count first, and the model must reject that variant.
template <bool SecondLook>
struct termination_scenario : rl::test_suite<termination_scenario<SecondLook>, 3> {
    relacy_atomics::atomic<std::uint32_t> active{0};
    relacy_atomics::atomic<std::size_t> parked{0};
    relacy_atomics::atomic<int> epoch{0};
    fj::detail::injection_queue<item, relacy_atomics> queue;
    fj::detail::chase_lev_deque<item*, relacy_atomics> deque{2};
    item task;
    bool admitted = false;
    int runs = 0;
    bool stopped = false;
    bool left_unstopped = false;
    int key = 0;

    void before() { active.store(1, std::memory_order_relaxed); }

    void thread(unsigned index) {
        if (index == 0)
            caller();
        else if (index == 1)
            shutdown();
        else
            worker();
    }

    void wake() { epoch.fetch_add(1, std::memory_order_seq_cst); }

    void caller() {
        if (!fj::detail::enter_counted(active, queue)) {
            if (fj::detail::leave_counted(active, queue))
                wake();
            return;
        }
        admitted = true;
        task.payload($) = 1;
        deque.push_seq_cst(&task);
        if (item* t = deque.pop()) {
            queue.push(t, true);
            wake();
        }
        if (fj::detail::leave_counted(active, queue))
            wake();
    }

    void shutdown() {
        queue.close();
        wake();
    }

    item* take() {
        if (!queue.empty())
            return queue.try_pop();
        item* t = nullptr;
        return deque.steal(t) == fj::detail::steal_result::success ? t : nullptr;
    }

    void worker() {
        for (;;) {
            key = epoch.load(std::memory_order_seq_cst);
            const bool closed = queue.is_closed();
            if (item* t = take()) {
                RL_ASSERT(t->payload($) == 1);
                ++runs;
                continue;
            }
            switch (fj::detail::leave_after_recheck(active, closed, parked, [this] {
                return SecondLook && (!queue.empty() || !deque.empty_hint());
            })) {
            case fj::detail::last_out::stops:
                stopped = true;
                return;
            case fj::detail::last_out::work_appeared:
                continue;
            case fj::detail::last_out::not_last:
                left_unstopped = true;
                return;
            }
        }
    }

    void after() {
        RL_ASSERT(runs <= 1);
        // Stopped: nothing of the caller's is left behind.
        if (stopped)
            RL_ASSERT(!admitted || runs == 1);
        // Asleep without stopping: woken after its re-check, so it looks again.
        if (left_unstopped)
            RL_ASSERT(epoch.load(std::memory_order_relaxed) != key);
    }
};

constexpr fj::model::search k_bounded{rl::sched_bound, 2};

TEST(termination_model, a_caller_against_shutdown_and_the_last_worker) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<termination_scenario<true>>(k_bounded));
}

// Relacy runs every read-modify-write on the latest value whatever its order argument, so no
// weakened order of the count's own updates is a mutant it can reject; the variant it must reject
// is the protocol without the last one's second look.
TEST(termination_model, the_last_worker_without_a_second_look_is_rejected) {
    EXPECT_FALSE(fj::model::check<termination_scenario<false>>(k_bounded).passed)
        << "the checker accepted a stop with the caller's task left in the queue";
}

} // namespace
