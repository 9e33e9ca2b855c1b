// Whether a thread is asleep in the kernel, as Linux reports it in /proc/self/task/<tid>/stat:
// what the rescue (rescue.hpp) reads to tell a blocked worker from one that computes.
#pragma once

#include <string_view>
#include <sys/types.h>

namespace fj::detail {

enum class kernel_thread_state {
    running, // R: on a CPU or waiting for one
    blocked, // S or D: asleep in the kernel (a futex, a read, a sleep; D: uninterruptible I/O)
    other,   // stopped, traced, exiting, or unreadable: never taken for blocked
};

// The calling thread's id, as /proc names it.
pid_t current_thread_id() noexcept;

// The state of thread `tid` of this process. Costs an open, a read and a close.
kernel_thread_state read_thread_state(pid_t tid) noexcept;

// The state field of a stat line ("<tid> (<comm>) <state> ..."; the command name may itself hold
// spaces and parentheses, so the field is found after the last ')').
kernel_thread_state parse_thread_stat(std::string_view line) noexcept;

} // namespace fj::detail
