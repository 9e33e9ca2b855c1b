// One worker's trace (docs/tracing.md): a preallocated array of fixed-size events, written only
// by the thread running that worker (no locks, no atomics) and read only after the workers have
// been joined (the join orders every write before the read).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fj::detail {

enum class trace_kind : std::uint8_t {
    task_begin,    // a task (or a join branch run inline) starts: opens a slice
    task_end,      // closes the innermost slice
    task_reopen,   // a parked task's slice, reopened where it resumed ("task (resumed)")
    steal,         // the next task was stolen; arg = the victim's worker index
    take_injected, // the next task came from the injection queue
    sleep_begin,   // the worker sleeps on the event count: opens a "sleep" slice
    sleep_end,     // ... and woke up
    park,          // the running task parked on its fiber (its slices close: suspend_slices);
                   // arg = what it waits for (park_reason)
    resume,        // a parked task continues here (its slices reopen); arg = where it parked
    spare_start,   // this spare slot's thread starts; arg = spare_reason (rescue.hpp)
    spare_retire,  // ... and leaves the pool
};

struct trace_event {
    std::uint64_t ns; // since trace_epoch()
    std::uint32_t arg;
    trace_kind kind;
};

// The process-wide time origin of all traces, so the tracks of several schedulers line up.
std::chrono::steady_clock::time_point trace_epoch() noexcept;

class trace_buffer {
public:
    // Reserves room for `capacity` events up front (virtual memory: only written pages become
    // resident), so recording never allocates. Throws std::bad_alloc.
    explicit trace_buffer(std::size_t capacity) : m_capacity(capacity) {
        m_events.reserve(capacity);
    }

    // When full, later events are counted as dropped and not stored; the writer closes the
    // slices left open, so the file stays well nested.
    void record(trace_kind kind, std::uint32_t arg = 0) noexcept {
        if (m_events.size() == m_capacity) [[unlikely]] {
            ++m_dropped;
            return;
        }
        const auto since = std::chrono::steady_clock::now() - trace_epoch();
        m_events.push_back(
            {static_cast<std::uint64_t>(
                 std::chrono::duration_cast<std::chrono::nanoseconds>(since).count()),
             arg, kind});
    }

    void begin_task() noexcept {
        record(trace_kind::task_begin);
        ++m_open;
    }
    void end_task() noexcept {
        record(trace_kind::task_end);
        --m_open;
    }

    // The running task parks: its open slices end here (the worker goes on with other work, on a
    // fresh fiber, at depth 0). Returns how many, for resume_slices().
    std::uint32_t suspend_slices(std::uint32_t why) noexcept {
        const std::uint32_t open = m_open;
        record(trace_kind::park, why);
        for (std::uint32_t i = 0; i < open; ++i)
            record(trace_kind::task_end);
        m_open = 0;
        return open;
    }

    // A parked task continues on this worker (whose loop has just ended, at depth 0): its
    // `open` slices reopen here. `parked_on` is the worker it parked on.
    void resume_slices(std::uint32_t open, std::uint32_t parked_on) noexcept {
        for (std::uint32_t i = 0; i < open; ++i)
            record(trace_kind::task_reopen);
        record(trace_kind::resume, parked_on);
        m_open = open;
    }

    const std::vector<trace_event>& events() const noexcept { return m_events; }
    std::uint64_t dropped() const noexcept { return m_dropped; }

private:
    std::vector<trace_event> m_events;
    std::size_t m_capacity;
    std::uint64_t m_dropped = 0;
    std::uint32_t m_open = 0; // task slices open on the fiber this worker is running
};

} // namespace fj::detail
