// The join of two coroutine branches (co_await fj::join(a, b) of two fj::task; coroutine_task.hpp,
// docs/design/coroutines.md#tasks, steps 3 and 4): which branch's end resumes the parent.
#pragma once

#include "atomics.hpp"

#include <atomic>

namespace fj::detail {

template <class Atomics = std_atomics>
class basic_branch_join {
public:
    // The first branch ends on the thread that pushed the second's start onto `deque` (null off a
    // worker). True if the start was still on top: nobody else can take it now, so the first
    // branch runs the second next, and the second's end resumes the parent without counting.
    // Else what was on top (a task the first branch forked and left) is pushed back where it was,
    // and both ends count. The comparison is of addresses only: a task at that address can be on
    // this deque only if it is the second branch's start, which was pushed once.
    template <class Deque, class Task, class PushBack>
    static bool take_back_second(Deque* deque, const Task* second_start, PushBack&& push_back) {
        if (deque != nullptr) {
            if (auto* top = deque->pop()) {
                if (top == second_start)
                    return true;
                push_back(top);
            }
        }
        return false;
    }

    // A branch ends while the other may end on another thread: true for the last of the two,
    // which resumes the parent. The other returns without touching the join or either frame
    // again (the parent may already run and destroy them).
    bool end_counted() noexcept {
        // acq_rel: the release publishes this branch's result (and its exception) to the thread
        // that resumes the parent; the acquire of the last end takes the other branch's. The two
        // decrements are RMWs of one location, so exactly one of them sees 1.
        return m_left.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }

private:
    typename Atomics::template atomic<int> m_left{2};
};

using branch_join = basic_branch_join<>;

} // namespace fj::detail
