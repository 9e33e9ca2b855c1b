// The parallelism profiler's bookkeeping (docs/tracing.md#profiler), after Cilkscale: every task
// run inside an fj::profile region is a frame that measures its own strands (the stretches of
// time it runs between forks, joins and waits). Work (T1) is the sum of all strands; span (T∞)
// is the longest chain of strands along the fork and join edges:
//   fork   the child starts with the parent's span so far (an edge's prefix);
//   join   after fj::join or future::get(), the parent's span becomes the larger of its own and
//          the child's span at its end;
//   wait   time spent waiting (helping, parked, asleep) is neither work nor span: the frame's
//          strand is paused, and tasks run meanwhile are frames of their own.
// The runtime reports forks, joins, waits and parks through its observation points
// (observe.hpp): while nothing observes, each is one load of a global counter and a branch; all
// the measuring happens out of line, in runtime/src/observe/profile.cpp.
//
// Lifetime: a region is shared by everything that can still add to it (its root, and the edges
// of its forked children), so a child forked in a region and never joined may outlive
// fj::profile() and still end its frame safely.
#pragma once

#include "current.hpp"
#include "observe.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace fj::detail {

// One fj::profile() call's (or one whole-run scheduler's) totals, in nanoseconds of thread CPU
// time (profile.cpp says why).
struct profile_region : std::enable_shared_from_this<profile_region> {
    // An observer while it lives (observe.hpp): the runtime reports events while one exists.
    profile_region() noexcept { observer_attached(); }
    ~profile_region() { observer_detached(); }
    profile_region(const profile_region&) = delete;
    profile_region& operator=(const profile_region&) = delete;

    std::atomic<std::uint64_t> work{0};   // the sum of every strand
    std::atomic<std::uint64_t> span{0};   // the longest chain ending at any frame's end
    std::atomic<std::uint64_t> frames{0}; // tasks measured (the root included)
};

// A fork edge: where the child starts (the parent's span at the fork) and, once it has finished,
// the span at its end. Written by the child before its completion is published; read by the
// joiner after it has seen the completion (which orders the two).
struct profile_edge {
    std::shared_ptr<profile_region> region; // keeps the region alive for the child
    std::uint64_t prefix = 0;
    std::atomic<std::uint64_t> end{0};
};

struct profile_frame {
    profile_region* region = nullptr;
    profile_frame* below = nullptr; // the frame this one interrupted on the same stack, if any
    std::uint64_t span = 0;         // critical path from the region's start to the last boundary
    std::uint64_t work = 0;         // this frame's own strands
    std::uint64_t strand_start = 0; // when the open strand began
    bool running = false;           // a strand is open (not waiting, no nested frame on top)
    bool below_was_running = false; // resume `below`'s strand when this frame ends
};

// True if the calling thread runs a measured frame. A frame whose region ended meanwhile may
// see false and skip hooks: it then measures less, never anything unsafe.
inline bool profiling() noexcept {
    return observed() && context().profile != nullptr;
}

// Out of line (runtime/src/observe/profile.cpp).
// The current frame forks: closes its strand and fills `edge` with the region and the prefix.
void profile_fork(profile_edge& edge) noexcept;
// The same, for a future: the edge is shared by the child and a registry entry keyed by the
// future's state, so whichever task calls get() on it finds the edge (fj::future has no room
// for it: a fork's block must stay 64 bytes).
std::shared_ptr<profile_edge> profile_fork_shared();
void profile_register(const void* future_state, std::shared_ptr<profile_edge> edge);
// The current frame has seen the future's task finish (get(), wait()): joins its edge, if one was
// registered for that state (the first call takes it out of the registry). Does nothing outside
// a measured frame.
void profile_join_future(const void* future_state) noexcept;
// The current frame joins an edge it holds (fj::join's second branch).
void profile_join(const profile_edge& edge) noexcept;
// Waiting (observe.hpp's wait_observation): the current frame's strand pauses.
void profile_pause() noexcept;
void profile_resume() noexcept;
void profile_frame_begin(profile_frame& frame, profile_region* region,
                         std::uint64_t prefix) noexcept;
// Ends the frame (the calling thread's innermost); returns its span at the end.
std::uint64_t profile_frame_end(profile_frame& frame) noexcept;
// A nested region has ended inside `outer`: its work joins outer's region, its span outer's.
void profile_absorb(profile_frame& outer, const profile_region& inner) noexcept;
// Drops the registry entries of a finished region (futures forked in it and never joined).
void profile_forget(const profile_region& region) noexcept;

// A profiled child's frame, around its body: begins with the edge's prefix, records the end.
class profile_scope {
public:
    explicit profile_scope(profile_edge& edge) noexcept : m_edge(edge) {
        profile_frame_begin(m_frame, edge.region.get(), edge.prefix);
    }
    ~profile_scope() {
        // release: the joiner reads it after the task's completion, which is published later.
        m_edge.end.store(profile_frame_end(m_frame), std::memory_order_release);
    }
    profile_scope(const profile_scope&) = delete;
    profile_scope& operator=(const profile_scope&) = delete;

private:
    profile_edge& m_edge;
    profile_frame m_frame;
};

// The callable of a task forked inside a profiled region: the body, measured as a frame.
// Returns exactly what the body returns (a prvalue stays a prvalue: no extra move).
template <class F>
class profiled_body {
public:
    profiled_body(std::shared_ptr<profile_edge> edge, F&& fn)
        : m_edge(std::move(edge)), m_fn(std::move(fn)) {}
    profiled_body(std::shared_ptr<profile_edge> edge, const F& fn)
        : m_edge(std::move(edge)), m_fn(fn) {}

    decltype(auto) operator()() {
        profile_scope scope(*m_edge);
        return m_fn(); // a task body takes no arguments: std::invoke would add nothing
    }

private:
    std::shared_ptr<profile_edge> m_edge;
    F m_fn;
};

} // namespace fj::detail
