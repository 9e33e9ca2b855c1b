// The task-stack overflow diagnosis: see overflow_handler.hpp.
#include "fibers/overflow_handler.hpp"

#include "fibers/fiber_switch.hpp" // FJ_ASAN / FJ_TSAN
#include "fibers/guard_registry.hpp"

#include <csignal>
#include <cstddef>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace fj::detail {
namespace {

#if defined(FJ_ASAN) || defined(FJ_TSAN)
constexpr bool k_enabled = false;
#else
constexpr bool k_enabled = true;
#endif

constexpr std::size_t k_signal_stack_size = std::size_t{64} << 10;

struct sigaction g_previous {};

void on_segv(int, siginfo_t* info, void*) {
    // Async-signal-safe only: a lock-free registry lookup and write(2).
    if (address_in_stack_guard(info->si_addr)) {
        static const char message[] =
            "fj: stack overflow in a task: it ran past the end of its stack and hit the guard "
            "page. Raise scheduler_options::fiber_stack_size (tasks run on fiber stacks), or "
            "worker_stack_size when parking is off, or make the recursion shallower.\n";
        (void)!write(STDERR_FILENO, message, sizeof message - 1);
    }
    // Hand the fault back: returning re-runs the faulting access under the previous action.
    sigaction(SIGSEGV, &g_previous, nullptr);
}

} // namespace

void install_overflow_handler() noexcept {
    if constexpr (k_enabled) {
        static std::once_flag once;
        std::call_once(once, [] {
            struct sigaction action {};
            action.sa_sigaction = &on_segv;
            action.sa_flags = SA_SIGINFO | SA_ONSTACK;
            sigemptyset(&action.sa_mask);
            (void)sigaction(SIGSEGV, &action, &g_previous);
        });
    }
}

overflow_signal_stack::overflow_signal_stack() noexcept {
    if constexpr (k_enabled) {
        stack_t current{};
        if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0)
            return; // the thread has one already (or we cannot tell): leave it alone
        void* memory = mmap(nullptr, k_signal_stack_size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED)
            return;
        stack_t alternate{};
        alternate.ss_sp = memory;
        alternate.ss_size = k_signal_stack_size;
        if (sigaltstack(&alternate, nullptr) != 0) {
            munmap(memory, k_signal_stack_size);
            return;
        }
        m_memory = memory;
    }
}

overflow_signal_stack::~overflow_signal_stack() {
    if (m_memory == nullptr)
        return;
    stack_t disable{};
    disable.ss_flags = SS_DISABLE;
    (void)sigaltstack(&disable, nullptr);
    munmap(m_memory, k_signal_stack_size);
}

} // namespace fj::detail
