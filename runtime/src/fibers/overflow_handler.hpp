// A task that overflows its stack hits the stack's guard: a SIGSEGV like any other, which tells
// the user nothing. This handler recognises a fault in a guard (guard_registry.hpp: the
// fiber stacks' guards, and the end of every worker thread's own stack, where tasks run with
// parking off) and says "stack overflow in a task" and what to do, then lets the fault take its
// course (the previous handler, or the default action: the process dies with SIGSEGV).
//
// It runs on an alternate signal stack (the overflowing stack has no room left), one per worker
// thread (worker_main). Not installed in sanitizer builds: ASan and TSan own SIGSEGV and the
// alternate stack, and their own report of the overflow is the better one.
#pragma once

namespace fj::detail {

// Installs the process-wide handler, once. Best effort: does nothing if it cannot.
void install_overflow_handler() noexcept;

// Gives the calling thread an alternate signal stack for the handler while it lives, unless the
// thread already has one.
class overflow_signal_stack {
public:
    overflow_signal_stack() noexcept;
    ~overflow_signal_stack();
    overflow_signal_stack(const overflow_signal_stack&) = delete;
    overflow_signal_stack& operator=(const overflow_signal_stack&) = delete;

private:
    void* m_memory = nullptr;
};

} // namespace fj::detail
