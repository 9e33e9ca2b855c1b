// The worker loop: find work, run it, spin and sleep while there is none (docs/design/find-work.md
// for the order, docs/design/sleep.md for the sleep, docs/design/crowded.md for a pool with more
// workers than CPUs). Idle workers spin for options().spin_before_sleep, then sleep through the
// sleep protocol (sleep/); in a crowded pool they spin only while the awake workers fit on the
// CPUs, and sleep with a timeout. The shutdown sequence is in lifecycle/pool.cpp.
#include "loop/worker_loop.hpp"

#include "budget/places.hpp"
#include "fibers/guard_registry.hpp"
#include "fibers/overflow_handler.hpp"
#include "loop/find_work.hpp"
#include "observe/events.hpp"
#include "parking/parking.hpp"
#include "platform/thread_name.hpp"
#include "sleep/crowding.hpp"
#include "sleep/sleep.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

#include <forkjoin/detail/cpu_relax.hpp>
#include <forkjoin/detail/observe.hpp>

namespace fj::detail {
// Its symbol name comes from the declaration's asm label (current.hpp).
thread_local constinit thread_context tl_context __attribute__((tls_model("initial-exec"))){};
int tls_anchor = 0;

__attribute__((noinline)) thread_context& context_out_of_line() noexcept {
    thread_context* p = &tl_context;
    asm volatile("" : "+r"(p)::"memory"); // not const, not pure: re-evaluated at every call
    return *p;
}

namespace {

// How long worker 0 sleeps before it comes back to release a burst's unused task memory (the
// central pool's decay is 10 s, so memory goes back within 11 s of its last use; block_cache.hpp).
constexpr std::chrono::milliseconds k_idle_block_release_period{1000};
// How long an idle spare sleeps before it retires.
constexpr std::chrono::milliseconds k_spare_idle{100};

// A spare leaves the pool for good (docs/design/rescue.md, step 7) unless work is in sight. Only
// at its loop's top level with nothing of its own pending: an empty deque (its tasks' forks are
// run or stolen) and no resumable waiter in its slot.
bool try_retire(pool& p, worker& w) noexcept {
    if (!w.m_deque.owner_sees_empty() || w.m_resumable.load(std::memory_order_relaxed) != nullptr)
        return false;
    if (!leave_unless_work(p))
        return false;
    if (w.observed()) [[unlikely]]
        on_spare_retire(w); // its thread still owns the buffer until it ends
    return true;
}

// Returns the next task for worker w, sleeping while there is none; nullptr once the pool has
// stopped (closed, and every task finished: the termination invariant, state/pool.hpp) or, for a
// spare, once it has retired.
task* find_work_or_sleep(pool& p, worker& w) {
    const bool spare = is_spare(w);
    bool idle_too_long = false;       // a spare slept k_spare_idle without finding work
    auto backstop = k_backstop_first; // a crowded pool's sleep timeout (crowding.hpp)
    // Whether w holds one of the pool's searching places (docs/design/sleep.md#searching): taken
    // before it spins, or with the ticket of the wake-up that ended its sleep. Every way out of
    // this function gives it back.
    bool searching = false;
    // Gives the place back; returns whether w was the last searcher.
    const auto stop_searching_if = [&p, &searching](bool found_work) {
        const bool last = searching && stop_searching(p, found_work);
        searching = false;
        return last;
    };
    for (;;) {
        if (spare) [[unlikely]] {
            if (idle_too_long || p.m_spare_hooks->retire_requested(w.m_index)) {
                // Its going idle in try_retire() re-checks for the work left to it; when it stays
                // for work instead, it passes the wake-up on as a searcher that found work.
                const bool was_last = stop_searching_if(false);
                if (try_retire(p, w))
                    return nullptr;
                if (was_last)
                    wake_next_searcher(p);
            }
        }
        if (task* t = find_work(p, w, true)) {
            stop_searching_if(true);
            return t;
        }

        // 1. Spin: work often appears within microseconds (a sibling's next fork), and a sleep plus
        //    a wake-up costs tens of microseconds. Only as a searcher: at most half of the awake
        //    workers spin (try_start_searching()); the others go straight to sleep, and a push
        //    wakes a sleeper only while nobody searches. Not while more threads are awake than
        //    the pool runs at once (its CPUs, at most its size: docs/design/crowded.md): a spinner
        //    then runs in place of a thread with work, so give that one the CPU instead (yield),
        //    look once more and sleep.
        const auto idle_since = std::chrono::steady_clock::now();
        const std::size_t capacity = run_capacity(p, current_cpus(p, idle_since));
        const std::size_t threads = threads_running_tasks(p);
        const bool crowded = threads > capacity;
        task* found = nullptr;
        if (crowded && awake_workers(threads, p.m_sleepers.waiters()) > capacity) {
            std::this_thread::yield();
            found = find_work(p, w, true);
        } else if (searching ||
                   p.m_sleepers.try_start_searching(static_cast<std::uint32_t>(p.m_worker_count))) {
            searching = true;
            const auto spin_until = idle_since + p.m_options.spin_before_sleep;
            for (unsigned round = 0; found == nullptr; ++round) {
                for (int i = 0; i < 32; ++i)
                    cpu_relax();
                // Sampled: in a large pool a full pass per round would probe every deque
                // thousands of times in one spin; go_idle()'s re-check is a full one.
                found = find_work_sampled(p, w);
                if ((round & 15) == 15 && std::chrono::steady_clock::now() >= spin_until)
                    break;
            }
        }
        if (found != nullptr) {
            stop_searching_if(true);
            return found;
        }
        // A searcher that found nothing stops before it goes idle: its re-check there, after this
        // RMW, sees what pushes left to it (docs/design/sleep.md#searching).
        const bool was_last = stop_searching_if(false);

        // Going idle: a good moment to give back task memory a burst left unused for a while
        // (block_cache.hpp). Worker 0 sleeps with a timeout, so an idle program still returns a
        // burst's memory that appears, or decays, while every worker sleeps (freed futures on
        // an outside thread): one wake-up a second per pool, whatever its size.
        if (idle_blocks_pending())
            release_idle_blocks(false);

        // 2. Sleep, through the sleep protocol (docs/design/sleep.md#steps). Its variant is the
        //    timeout: a spare sleeps k_spare_idle (its end, docs/design/rescue.md); a crowded
        //    pool's sleeper the backstop, since a pusher that skipped waking it may block before
        //    it takes its work (docs/design/crowded.md); worker 0 the memory release period;
        //    the others until woken.
        const idle_check idle = go_idle(p, &w);
        if (idle == idle_check::stopped || idle == idle_check::stopped_it)
            return nullptr;
        if (idle == idle_check::work_in_sight) {
            // The last searcher saw work at its re-check after all: it wakes the next, as one
            // that found work does, rather than keep to itself what pushes left to it.
            if (was_last)
                wake_next_searcher(p);
            continue;
        }
        // A pool that runs callers' calls sleeps like a crowded one whenever a caller would crowd
        // it: a caller's push may have skipped waking us (sleep/crowding.hpp) while its caller
        // then blocks in the kernel (docs/design/callers.md).
        const bool timed = crowded || p.m_worker_count + p.m_callers.made() > capacity;
        const std::chrono::milliseconds timeout = spare            ? k_spare_idle
                                                  : timed          ? backstop
                                                  : w.m_index == 0 ? k_idle_block_release_period
                                                                   : std::chrono::milliseconds{0};
        const slept s = sleep_until_woken(p, w, timeout);
        searching = s.woken;                      // a wake-up's ticket brings a searching place
        w.m_backstop_expired = timed && !s.woken; // leaves_callers_alone(), state/pool.hpp
        if (p.m_stop.load(std::memory_order_acquire)) {
            stop_searching_if(false);
            return nullptr;
        }
        if (spare && std::chrono::steady_clock::now() >= s.began + k_spare_idle)
            idle_too_long = true;
        // An idle crowded pool backs off its timed looks; queued work brings them back.
        const bool timed_out = !spare && timed && !s.woken;
        backstop = timed_out && !work_visible(p) ? next_backstop(backstop) : k_backstop_first;
    }
}

} // namespace

void run_worker_loop(pool& p) noexcept {
    for (;;) {
        worker& w = *current_worker(); // re-read every round: a loop fiber may have migrated
        task* t = nullptr;
        bool is_recheck = false;
        if (!has_yielded(p, w)) {
            t = find_work_or_sleep(p, w);
            if (t == nullptr)
                return; // stopped (or a spare retired)
        } else {
            // A yielded task waits here: never sleep (its predicate cannot wake us), and re-check
            // it once its patience has run out. find_work(), not find_work_or_sleep(): the pool
            // cannot stop meanwhile (m_parked counts it).
            if (!yielded_due(p, w))
                t = find_work(p, w, true);
            if (t == nullptr) {
                t = take_yielded(p, w);
                is_recheck = true;
            }
        }
        begin_loop_task(p, w, t, is_recheck);
        run_task(w, t);
        if (end_loop_task(p))
            return; // the task took a parked task's record: this loop fiber ends into it
    }
}

void worker_main(pool& p, std::size_t index) {
    worker& w = p.m_workers[index];
    // For the overflow diagnosis (overflow_handler.hpp), in both modes: the handler's stack, and
    // this thread's own stack end registered beside the fiber stacks' guards.
    const overflow_signal_stack signal_stack;
    const thread_stack_guard own_stack_guard;
    context() = {&w, &p, nullptr};
    name_this_thread(w.m_role == slot_role::spare ? "fj-spare" : "fj-worker");
    if (p.m_spare_hooks != nullptr)
        p.m_spare_hooks->on_thread_start(index);
    const bool budgeted = takes_cpu_place(p, w);
    if (budgeted) {
        cpu_budget::instance().enrol(w);
        take_cpu_place(p, w, false);
    }
    if (p.m_parking == nullptr || !run_worker_on_fibers(p, w))
        run_worker_loop(p);
    if (budgeted)
        cpu_budget::instance().leave(w); // gives back its place
    context() = {};
}

void leave_active(pool& p) noexcept {
    // With work in sight, somebody counted (or woken for it) takes it and later leaves through
    // the termination check; this count only goes.
    if (!leave_unless_work(p))
        p.m_active.fetch_sub(1, std::memory_order_seq_cst); // seq_cst: as every m_active update
}

} // namespace fj::detail
