// The process-wide guard registry and thread_stack_guard (see guard_registry.hpp).
#include "fibers/guard_registry.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <pthread.h>

namespace fj::detail {
namespace {

// One word per stack: the guard's base address (page-aligned, so its low 12 bits are zero on every
// Linux page size) ORed with the guard's length in 4 KiB units (at most 4095 of them). One word,
// so a reader never sees half of one registration and half of another.
constexpr std::uintptr_t k_unit = k_guard_unit;
constexpr std::uintptr_t k_unit_mask = k_unit - 1;
constexpr std::uint32_t k_no_slot = k_no_guard_slot;
// How far below a worker thread's stack a fault still counts as its overflow (thread_stack_guard).
constexpr std::uintptr_t k_guard_window_below = std::uintptr_t{64} << 10;

static_assert(k_guard_max_units == k_unit_mask, "a guard's length in units fits below its base");
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free &&
                  std::atomic<std::size_t>::is_always_lock_free,
              "address_in_stack_guard must be async-signal-safe");

class guard_registry {
public:
    static constexpr std::size_t k_slots = 65536; // 512 KiB of zero pages until used

    // For the fork() handlers (process_fork.cpp).
    void lock() noexcept { m_mutex.lock(); }
    void unlock() noexcept { m_mutex.unlock(); }

    // The slot now holding [base, base + guard_bytes), or k_no_slot if the registry is full.
    std::uint32_t add(std::uintptr_t base, std::size_t guard_bytes) noexcept {
        const std::uintptr_t word = base | (guard_bytes / k_unit);
        std::lock_guard lock(m_mutex);
        // relaxed: only writers change m_high_water, and they hold m_mutex.
        const std::size_t high = m_high_water.load(std::memory_order_relaxed);
        std::size_t i = m_first_free;
        // relaxed: slots are only written under m_mutex, which we hold.
        while (i < high && m_slots[i].load(std::memory_order_relaxed) != 0)
            ++i;
        if (i == k_slots)
            return k_no_slot;
        // relaxed: the word is self-contained. A reader that reaches this stack through the
        // hand-off of the stack itself (a mutex, a fiber switch) happens-after this store and sees
        // it; one that races may miss it, as it may miss any registration still in progress.
        m_slots[i].store(word, std::memory_order_relaxed);
        if (i == high) {
            // release: a reader that acquires the new high-water mark sees the slot stored above.
            m_high_water.store(high + 1, std::memory_order_release);
        }
        m_first_free = i + 1;
        return static_cast<std::uint32_t>(i);
    }

    void remove(std::uint32_t slot) noexcept {
        if (slot == k_no_slot)
            return;
        std::lock_guard lock(m_mutex);
        // relaxed: clearing publishes nothing else; it precedes the munmap in program order, and a
        // reader racing with the munmap may report the guard either way (documented).
        m_slots[slot].store(0, std::memory_order_relaxed);
        m_first_free = std::min<std::size_t>(m_first_free, slot);
    }

    bool contains(std::uintptr_t address) const noexcept {
        // acquire: pairs with the release in add(), so every slot below the mark is initialised.
        const std::size_t high = m_high_water.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < high; ++i) {
            // relaxed: each word is self-contained (see add()).
            const std::uintptr_t word = m_slots[i].load(std::memory_order_relaxed);
            const std::uintptr_t base = word & ~k_unit_mask;
            if (word != 0 && address >= base && address - base < (word & k_unit_mask) * k_unit)
                return true;
        }
        return false;
    }

private:
    std::atomic<std::uintptr_t> m_slots[k_slots]; // 0: free; zero-initialised (static storage)
    std::atomic<std::size_t> m_high_water{0};     // slots at and above it were never used
    std::size_t m_first_free = 0;                 // no free slot below it; guarded by m_mutex
    std::mutex m_mutex;
};

// Constant-initialised, so it exists before any pool and is never destroyed before one: a pool
// destroyed during static destruction still unregisters, and a SIGSEGV handler can read it any
// time. (Its destructor is trivial.)
constinit guard_registry g_registry;

} // namespace

bool address_in_stack_guard(const void* address) noexcept {
    return g_registry.contains(reinterpret_cast<std::uintptr_t>(address));
}

std::uint32_t register_stack_guard(std::uintptr_t base, std::size_t guard_bytes) noexcept {
    return g_registry.add(base, guard_bytes);
}

void unregister_stack_guard(std::uint32_t slot) noexcept {
    g_registry.remove(slot);
}

void lock_guard_registry() noexcept {
    g_registry.lock();
}

void unlock_guard_registry() noexcept {
    g_registry.unlock();
}

thread_stack_guard::thread_stack_guard() noexcept : m_slot(k_no_slot) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0)
        return;
    void* low = nullptr; // the lowest usable address: the thread library's guard lies below it
    std::size_t size = 0;
    const bool found = pthread_attr_getstack(&attributes, &low, &size) == 0;
    pthread_attr_destroy(&attributes);
    const auto base = reinterpret_cast<std::uintptr_t>(low);
    if (!found || base % k_unit != 0 || base < k_guard_window_below)
        return;
    // From 64 KiB below the stack to the end of its lowest page: a frame that overflows faults
    // in the thread library's guard (a page by default) or, if large, somewhat below it.
    m_slot = g_registry.add(base - k_guard_window_below, k_guard_window_below + k_unit);
}

thread_stack_guard::~thread_stack_guard() {
    g_registry.remove(m_slot);
}

} // namespace fj::detail
