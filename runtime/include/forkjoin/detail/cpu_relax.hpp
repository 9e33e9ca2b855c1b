// A spin-wait hint: tells the core that the caller is busy-waiting (frees pipeline resources for
// a sibling hyperthread, and saves power), for every spin loop in the runtime.
#pragma once

namespace fj::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// std::this_thread::yield(), out of line: for the rare spin that waits on a thread that may have
// been preempted, without putting <thread> into the public headers.
void yield_thread() noexcept;

} // namespace fj::detail
