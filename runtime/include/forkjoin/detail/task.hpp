// The unit of work that queues hold.
#pragma once

#include <atomic>

namespace fj::detail {

// A type-erased task: queues hold `task*`, and whoever takes one calls run() exactly once.
// Rule: every task pushed to a deque or the injection queue is run exactly once, by whichever
// worker (or helping thread) takes it; run() never throws (tasks capture their own exceptions) and
// may free the task, so nothing may touch it afterwards.
//
// Concrete tasks derive from this and live either on the forking frame's stack (join_task: freed
// by the frame, which outlives it) or in a pooled block (fork_task: frees itself when both the task
// and its future are done).
struct task {
    using run_fn = void (*)(task*) noexcept;

    run_fn m_run = nullptr;
    std::atomic<task*> m_next{nullptr}; // link for the injection queue only

    void run() noexcept { m_run(this); }
};

} // namespace fj::detail
