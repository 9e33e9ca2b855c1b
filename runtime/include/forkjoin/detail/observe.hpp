// Observation points (docs/tracing.md#observers): how trace mode and the profiler see the
// runtime, and the only way they do. Each event has one call site in the runtime. While nothing
// observes (no fj::profile region, no whole-run profile, no pool that traces), an event costs one
// relaxed load of a global and a predictable branch; everything else happens out of line, in
// runtime/src/observe/events.cpp, which hands the event to each observer it concerns: the trace
// buffer of the worker's pool, the profiler's current frame, a pool's whole-run profile.
//
// The events of the inline paths are declared here; those of runtime/src (steal, sleep, park,
// a pool's start and stop) in runtime/src/observe/events.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace fj::detail {

struct worker;
struct task;
struct pool_core;
struct profile_edge;

// Live observers: fj::profile regions (a whole-run profile is one) and pools that trace.
// Relaxed: an observer is counted before anything it observes runs (a region before its root
// frame, on the same thread; a tracing pool before its workers start), and every other thread
// reaches what is observed through a queue or a join, which orders the increment before. A
// thread that still sees 0 while an observer ends only skips events nobody observes any more.
extern std::atomic<std::uint32_t> g_observers;

inline bool observed() noexcept {
    return g_observers.load(std::memory_order_relaxed) != 0;
}
inline void observer_attached() noexcept {
    g_observers.fetch_add(1, std::memory_order_relaxed);
}
inline void observer_detached() noexcept {
    g_observers.fetch_sub(1, std::memory_order_relaxed);
}

// Out of line; each caller tests observed() first, except for a worker's own events, which only
// its pool's observers follow: their callers test worker::observed() (detail/worker.hpp).

// A task (or a join branch run inline) begins on w. True if an observer opened something that
// on_task_end() must close: a slice on w's trace track (not for a parked task's resumption record,
// which is no task).
bool on_task_begin(worker& w, const task* t) noexcept;
void on_task_end() noexcept;

// A child task is about to be created by fork (is_submit false) or submit (true) on pool p.
// Returns the fork edge to measure it under, or null: a child of a measured frame is measured,
// and so is a task submitted to a pool that profiles its whole run.
std::shared_ptr<profile_edge> on_child_created(pool_core& p, bool is_submit);
// The measured child's future state: its get() or wait() will join that edge.
void on_child_started(const void* future_state, std::shared_ptr<profile_edge> edge);
// fj::join's second branch becomes a measured child with `edge` on the joiner's stack; false if
// the joiner is no measured frame (then nothing is measured).
bool on_join_fork(profile_edge& edge) noexcept;
// The join has returned (or thrown): the joiner's frame joins the edge.
void on_join_end(const profile_edge& edge) noexcept;
// future::get() or wait() has seen its task finish.
void on_future_joined(const void* future_state) noexcept;
// A wait begins: the waiting frame's strand pauses (waiting is neither work nor span). True if
// on_wait_end() must resume it.
bool on_wait_begin() noexcept;
void on_wait_end() noexcept;

// Around each out-of-line wait (futures and join branches, reschedule_until, timed waits).
class wait_observation {
public:
    wait_observation() noexcept {
        if (observed()) [[unlikely]]
            m_paused = on_wait_begin();
    }
    ~wait_observation() {
        if (m_paused) [[unlikely]]
            on_wait_end();
    }
    wait_observation(const wait_observation&) = delete;
    wait_observation& operator=(const wait_observation&) = delete;

private:
    bool m_paused = false;
};

} // namespace fj::detail
