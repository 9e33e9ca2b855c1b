// Helping while waiting: a thread that waits on work of a pool runs that pool's tasks meanwhile
// (reschedule_until, waits that cannot park, try_run_one, and threads outside every pool).
#include "loop/helping.hpp"

#include "fibers/fiber_switch.hpp"
#include "loop/find_work.hpp"
#include "parking/parking.hpp"
#include "sleep/sleep.hpp"
#include "state/active_count.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include <forkjoin/detail/cpu_relax.hpp>
#include <forkjoin/detail/observe.hpp>

namespace fj::detail {

namespace {

// Waiting with nothing to run: pause briefly, then give the CPU to other threads.
void back_off(unsigned idle_rounds) {
    if (idle_rounds < 64) {
        for (int i = 0; i < 16; ++i)
            cpu_relax();
    } else {
        std::this_thread::yield();
    }
}

} // namespace

bool run_own_until(function_ref<bool()> done) {
    for (;;) {
        if (done())
            return true;
        worker& w = *current_worker(); // re-read: a task may have migrated us
        task* t = w.m_deque.pop();
        if (t == nullptr)
            return false;
        run_task(w, t);
    }
}

namespace {
void help_outside(pool& p, function_ref<bool()> done);
} // namespace

void help_until(pool_core& core, function_ref<bool()> done) {
    // docs/tracing.md#observers (one load of a global while nothing observes).
    const wait_observation observed;
    if (current_worker() == nullptr) {
        help_outside(pool_of(core), done);
        return;
    }
    if (current_worker()->m_pool == current_pool() && run_own_until(done))
        return; // our own children first, as without fibers
    // On a worker: yield-park until done (docs/design/parking.md): the waiting task steps aside
    // on its fiber and its worker resumes it to re-check after running `patience` other tasks,
    // so nothing runs on top of its frame. Where parking is not allowed, help while waiting.
    // Patience doubles with every failed re-check, up to 64 tasks: a wait that turns true soon is
    // seen after about one task; a long one costs a park per 64 tasks run, not one per task.
    for (std::uint32_t patience = 1; !done();
         patience = std::min<std::uint32_t>(patience * 2, 64)) {
        if (!try_yield(patience)) {
            // A worker helps its own pool, whichever it waits on. Re-read: we may have migrated.
            help_on_worker(pool_of(*current_worker()->m_pool), done);
            return;
        }
    }
}

namespace {

// Helping nests every task it runs on the waiting frame's stack. On a fiber stack (where the
// bounds are known) it stops taking new work once less than a quarter of the stack, at most
// 1 MiB, is left, and only waits: a deep pile of waits that could not park then costs time
// instead of a stack overflow.
constexpr std::size_t k_help_headroom = std::size_t{1} << 20;

bool stack_headroom_low() noexcept {
    const fiber_info* f = context().fiber;
    if (f == nullptr || f->stack_bottom == nullptr)
        return false; // a native stack: its bounds are not tracked
    const char here = 0;
    const auto left =
        reinterpret_cast<std::uintptr_t>(&here) - reinterpret_cast<std::uintptr_t>(f->stack_bottom);
    return left < std::min(k_help_headroom, f->stack_size / 4);
}

} // namespace

namespace {

// Runs p's tasks on the calling worker until done() holds or, with a bound, `max_idle_rounds`
// looks in a row found nothing (0: no bound); returns done().
bool help_for(pool& p, function_ref<bool()> done, unsigned max_idle_rounds) {
    for (unsigned idle_rounds = 0; max_idle_rounds == 0 || idle_rounds < max_idle_rounds;) {
        if (done())
            return true;
        if (stack_headroom_low()) { // wait without nesting more (see k_help_headroom)
            back_off(idle_rounds++);
            continue;
        }
        worker& w = *current_worker(); // re-read after every task: migration-safe
        if (task* t = find_work(p, w, false)) {
            run_task(w, t);
            idle_rounds = 0;
            continue;
        }
        back_off(idle_rounds++);
    }
    return done();
}

} // namespace

void help_on_worker(pool& p, function_ref<bool()> done) {
    help_for(p, done, 0); // until done
}

bool help_while_work(pool& p, function_ref<bool()> done) {
    // About as long as a wake-up takes: a thief of ours that is about to fork gets the time to.
    return help_for(p, done, 64);
}

namespace {

void help_outside(pool& p, function_ref<bool()> done) {
    for (unsigned idle_rounds = 0;;) {
        if (done())
            return;
        if (run_one_outside(p)) {
            idle_rounds = 0;
            continue;
        }
        // Nothing to run: an arbitrary predicate cannot wake us, so poll with a growing pause.
        if (idle_rounds < 256)
            back_off(idle_rounds);
        else
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        ++idle_rounds;
    }
}

} // namespace

bool run_forked_above(task* popped, task* target) {
    for (;;) {
        worker& w = *current_worker();
        run_task(w, popped); // forked by the joining frame's code and not joined: a descendant
        popped = current_worker()->m_deque.pop();
        if (popped == nullptr)
            return false;
        if (popped == target)
            return true;
    }
}

bool run_one_outside(pool& p) {
    // Counted as active while holding a task, so shutdown cannot finish under us (see the
    // termination invariant, state/pool.hpp). seq_cst: same single order as the workers'
    // decrements.
    p.m_active.fetch_add(1, std::memory_order_seq_cst);
    task* t = p.m_injected.try_pop();
    // relaxed: the counter only spreads outside helpers over victims; any value is correct.
    if (t == nullptr && p.m_workers.size() > 0)
        t = steal_from_others(
            p, nullptr, p.m_outside_rng.fetch_add(0x9e3779b97f4a7c15ull, std::memory_order_relaxed),
            false);
    if (t != nullptr) {
        // The task runs with its own pool as the current one (fj::fork etc. inside it).
        pool_core* saved = context().pool;
        context().pool = &p;
        t->run();
        context().pool = saved;
    }
    if (leave_counted(p.m_active, p.m_injected))
        wake_all(p); // we may have been the last one awake: let the workers re-check
    return t != nullptr;
}

bool try_run_one(pool& p) {
    if (worker* w = own_worker(p)) {
        if (task* t = find_work(p, *w, false)) {
            run_task(*w, t);
            return true;
        }
        return false;
    }
    return run_one_outside(p);
}

} // namespace fj::detail
