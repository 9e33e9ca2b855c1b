// Per-worker state. Each worker is padded to its own cache lines: false sharing between workers'
// counters would double fork/join times.
#pragma once

#include "block_cache.hpp"
#include "chase_lev_deque.hpp"
#include "current.hpp"
#include "fault_injection.hpp"
#include "observe.hpp"
#include "task.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace fj::detail {

// A counter written only by its worker and read by anyone: relaxed load + store, not an RMW.
class counter {
public:
    void bump() noexcept { add(1); }
    void add(std::uint64_t n) noexcept {
        m_value.store(m_value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    void unbump() noexcept {
        m_value.store(m_value.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    std::uint64_t get() const noexcept { return m_value.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> m_value{0};
};

struct worker_counters {
    counter tasks_run, forks, steals, failed_steals, failed_before_steal, injected_taken, sleeps,
        wakeups;
    counter parks, resumes, migrations; // tasks parked on a fiber; resumed here; of those, moved
    counter sync_parks; // of the parks, waits on the task-parking primitives and sleeps
};

struct pool_core;
class trace_buffer;

// What a pool's slot serves: one of the workers the pool was asked for, a spare the rescue of
// blocked pools starts (docs/design/rescue.md), or a thread outside the pool that runs its own
// parallel call (docs/design/callers.md). Every slot's deque is open to thieves alike.
enum class slot_role : unsigned char { worker, spare, caller };

struct alignas(128) worker {
    worker(pool_core* pool, std::size_t index, std::size_t deque_capacity,
           slot_role role = slot_role::worker)
        : m_pool(pool), m_index(index), m_role(role), m_rng(0x9e3779b97f4a7c15ull * (index + 1)),
          m_deque(deque_capacity) {}

    pool_core* const m_pool; // the pool it works for
    const std::size_t m_index;
    const slot_role m_role;
    bool m_backstop_expired = false; // its last sleep timed out: leaves_callers_alone()
    std::uint64_t m_rng = 0;         // xorshift state for victim selection
    std::uint32_t m_tick =
        0; // tasks taken; every k_injection_period-th look starts at the injection queue
    chase_lev_deque<task*> m_deque;
    // A parked task this worker has just made resumable (parking.cpp, make_resumable): a loop at
    // top level takes it before anything else, this worker's own or, if that one is busy, a
    // thief's; helping frames never do (they could only queue it again). Only the owner stores a
    // record here, and only into an empty slot; anyone takes it with an exchange. Its own cache
    // line (m_cache starts the next one): thieves read it on every steal attempt, the owner
    // writes it once per wake-up, but writes m_cache on every allocation.
    alignas(64) std::atomic<task*> m_resumable{nullptr};
    alignas(64) block_cache m_cache;
    // Set once before the worker starts when its pool traces
    // (runtime/src/observe/trace_buffer.hpp).
    trace_buffer* m_trace = nullptr;

    // Whether the worker's own events (task begin and end, steals, sleeps) have an observer:
    // only its pool's trace session follows them. A field of the worker, not observe.hpp's
    // global: one load relative to a pointer in a register, where a global in position-
    // independent code is two (its address comes from the GOT), on every task run.
    bool observed() const noexcept { return m_trace != nullptr; }
    worker_counters m_stats;
    // The process's budget of running workers (runtime/src/budget/cpu_budget.hpp): whether this
    // worker holds a place, and its kernel thread id for a starving waiter's look. Written by the
    // worker, read by a waiter on the budget's slow path (relaxed: a hint that /proc confirms).
    std::atomic<bool> m_holds_cpu{false};
    std::atomic<std::int32_t> m_tid{0};

    std::uint64_t next_random() noexcept {
        std::uint64_t x = m_rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return m_rng = x;
    }
};

// Runs task t's body on w as one counted (and observed: observe.hpp) task. The body may park and
// resume on another worker of the same pool (all of whose workers trace alike), so the end is
// reported wherever the body finishes.
// always_inline: part of join's inlined path (see result_slot.hpp).
template <class Body>
[[gnu::always_inline]] inline void run_counted(worker& w, const task* t, Body&& body) noexcept {
    w.m_stats.tasks_run.bump();
    bool begun = false;
    if (w.observed()) [[unlikely]]
        begun = on_task_begin(w, t);
    body();
    if (begun) [[unlikely]]
        on_task_end();
}

// Memory for tasks: the calling worker's cache, else the calling thread's outside cache (blocks
// are interchangeable between threads: see block_cache.hpp), else the heap.
template <class T>
void* allocate_task_memory() {
    fault_injection::check(fault_injection::site::task_allocation);
    constexpr std::size_t c = block_cache::class_of(sizeof(T));
    if constexpr (c < block_cache::k_class_count &&
                  alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
        if (worker* w = current_worker())
            return w->m_cache.allocate(c);
        if (block_cache* cache = outside_cache())
            return cache->allocate_for_burst(c);
        return ::operator new(block_cache::class_size(c));
    } else {
        return ::operator new (sizeof(T), std::align_val_t{alignof(T)});
    }
}

template <class T>
void free_task_memory(void* p) noexcept {
    constexpr std::size_t c = block_cache::class_of(sizeof(T));
    if constexpr (c < block_cache::k_class_count &&
                  alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
        if (worker* w = current_worker())
            return w->m_cache.deallocate(p, c);
        if (block_cache* cache = outside_cache())
            return cache->deallocate(p, c);
        ::operator delete(p);
    } else {
        ::operator delete (p, std::align_val_t{alignof(T)});
    }
}

// The same for a size known only at run time (a coroutine frame): a block of its size class, or
// the heap above the largest class. `size` must be the same when freeing.
inline void* allocate_frame_memory(std::size_t size) {
    const std::size_t c = block_cache::class_of(size);
    if (c < block_cache::k_class_count) {
        if (worker* w = current_worker())
            return w->m_cache.allocate(c);
        if (block_cache* cache = outside_cache())
            return cache->allocate_for_burst(c);
        return ::operator new(block_cache::class_size(c));
    }
    return ::operator new(size);
}

inline void free_frame_memory(void* p, std::size_t size) noexcept {
    const std::size_t c = block_cache::class_of(size);
    if (c < block_cache::k_class_count) {
        if (worker* w = current_worker())
            return w->m_cache.deallocate(p, c);
        if (block_cache* cache = outside_cache())
            return cache->deallocate(p, c);
    }
    ::operator delete(p);
}

} // namespace fj::detail
