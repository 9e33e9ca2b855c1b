// The waiter's side of the task group's count (docs/design/task-group.md#steps): publish the
// record, raise k_waiting; if nothing was pending by then, take the flag back unless a new task
// came in between; else wait on the record, which the last task finishes (it also clears the
// flag: finish_one() in forkjoin/detail/group_task.hpp). task_group.cpp instantiates it with
// std_atomics and the runtime's wait; the model test with Relacy's atomics and a spin.
#pragma once

#include <atomic>
#include <cstdint>

#include <forkjoin/detail/completion.hpp>
#include <forkjoin/detail/group_task.hpp>

namespace fj::detail {

// Returns once every task run so far has ended; wait_on(woken) waits until woken is finished.
template <class Atomics, class Wait>
void wait_for_group_tasks(basic_group_state<Atomics>& g, Wait&& wait_on) {
    using state = basic_group_state<Atomics>;
    // acquire: pairs with the tasks' release CASes; their effects are visible after it.
    if ((g.m_word.load(std::memory_order_acquire) >> 1) != 0) {
        basic_completion<Atomics> woken;
        g.m_waiter = &woken;
        // acq_rel: release publishes m_waiter to the task that sees k_waiting.
        const std::uint64_t old = g.m_word.fetch_or(state::k_waiting, std::memory_order_acq_rel);
        bool must_wait = true;
        if ((old >> 1) == 0) {
            std::uint64_t expected = state::k_waiting;
            must_wait = !g.m_word.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
        }
        if (must_wait)
            wait_on(woken);
        g.m_waiter = nullptr;
    }
}

} // namespace fj::detail
