// The parallelism profiler (docs/tracing.md#profiler): frames, strands and fork/join edges, as
// described in <forkjoin/detail/profile_frame.hpp>. The runtime's events reach it through
// events.cpp, only while a region exists; profile.cpp knows nothing of pools.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <time.h>
#include <unordered_map>

#include <forkjoin/detail/current.hpp>
#include <forkjoin/detail/profile_frame.hpp>
#include <forkjoin/profile_report.hpp>

namespace fj::detail {

namespace {

// Strands are timed in the calling thread's CPU time, not wall time: a thread that the OS
// preempts (a loaded machine, more threads than cores) does not make the strand it was running
// look longer, so work and span describe the program, not the machine's load. A strand always
// starts and ends on one thread: threads change only inside waits, where strands are paused.
// (The clock costs a system call, a few hundred ns, which is the profiler's main overhead.)
std::uint64_t now_ns() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(t.tv_nsec);
}

// Closes the frame's open strand: its time is both work and span (a strand is sequential).
void close_strand(profile_frame& f, std::uint64_t now) noexcept {
    if (!f.running)
        return;
    const std::uint64_t d = now - f.strand_start;
    f.span += d;
    f.work += d;
    f.strand_start = now;
}

void atomic_max(std::atomic<std::uint64_t>& target, std::uint64_t value) noexcept {
    // relaxed: a statistic read after the region's root has been joined, which orders it.
    std::uint64_t seen = target.load(std::memory_order_relaxed);
    while (seen < value && !target.compare_exchange_weak(seen, value, std::memory_order_relaxed))
        ;
}

// Edges of forked futures, by the future's state address. Sharded so that profiled forks on
// many workers rarely meet on one lock; the profiler's cost, never the runtime's.
class edge_registry {
public:
    void put(const void* state, std::shared_ptr<profile_edge> edge) {
        shard& s = shard_of(state);
        std::lock_guard lock(s.mutex);
        // A stale entry (a future forked earlier, dropped unread, whose block was reused) is
        // replaced: the address now names the new task.
        s.edges[state] = std::move(edge);
    }

    std::shared_ptr<profile_edge> take(const void* state) noexcept {
        shard& s = shard_of(state);
        std::lock_guard lock(s.mutex);
        const auto it = s.edges.find(state);
        if (it == s.edges.end())
            return nullptr;
        std::shared_ptr<profile_edge> edge = std::move(it->second);
        s.edges.erase(it);
        return edge;
    }

    void forget(const profile_region& region) noexcept {
        for (shard& s : m_shards) {
            std::lock_guard lock(s.mutex);
            std::erase_if(s.edges,
                          [&](const auto& entry) { return entry.second->region.get() == &region; });
        }
    }

private:
    struct alignas(64) shard {
        std::mutex mutex;
        std::unordered_map<const void*, std::shared_ptr<profile_edge>> edges; // guarded by mutex
    };

    shard& shard_of(const void* state) noexcept {
        // Blocks are 64-byte aligned at least: drop those bits before picking a shard.
        return m_shards[(reinterpret_cast<std::uintptr_t>(state) >> 6) % m_shards.size()];
    }

    std::array<shard, 64> m_shards;
};

edge_registry& registry() {
    static edge_registry* r = new edge_registry; // never destroyed: tasks may run during exit
    return *r;
}

} // namespace

void profile_frame_begin(profile_frame& frame, profile_region* region,
                         std::uint64_t prefix) noexcept {
    const std::uint64_t now = now_ns();
    thread_context& ctx = context();
    frame.region = region;
    frame.span = prefix;
    frame.work = 0;
    frame.below = ctx.profile;
    frame.below_was_running = false;
    if (frame.below != nullptr && frame.below->running) {
        // A task nested on this stack (an inline join branch, or one run while waiting): the
        // frame below stops accumulating until it ends.
        close_strand(*frame.below, now);
        frame.below->running = false;
        frame.below_was_running = true;
    }
    ctx.profile = &frame;
    frame.running = true;
    frame.strand_start = now;
}

std::uint64_t profile_frame_end(profile_frame& frame) noexcept {
    const std::uint64_t now = now_ns();
    close_strand(frame, now);
    frame.running = false;
    profile_region& region = *frame.region;
    region.work.fetch_add(frame.work, std::memory_order_relaxed);
    region.frames.fetch_add(1, std::memory_order_relaxed);
    atomic_max(region.span, frame.span);
    // context() again: the frame may have parked and resumed on another thread; `below` lives on
    // the same stack as this frame, so it moved with it.
    context().profile = frame.below;
    if (frame.below_was_running) {
        frame.below->running = true;
        frame.below->strand_start = now;
    }
    return frame.span;
}

void profile_fork(profile_edge& edge) noexcept {
    profile_frame& f = *context().profile;
    close_strand(f, now_ns());
    edge.region = f.region->shared_from_this();
    edge.prefix = f.span;
}

std::shared_ptr<profile_edge> profile_fork_shared() {
    auto edge = std::make_shared<profile_edge>();
    profile_fork(*edge);
    return edge;
}

void profile_register(const void* future_state, std::shared_ptr<profile_edge> edge) {
    registry().put(future_state, std::move(edge));
}

void profile_join(const profile_edge& edge) noexcept {
    profile_frame* f = context().profile;
    if (f == nullptr)
        return;
    close_strand(*f, now_ns());
    // acquire: pairs with profile_scope's release (also ordered by the completion already).
    f->span = std::max(f->span, edge.end.load(std::memory_order_acquire));
}

void profile_join_future(const void* future_state) noexcept {
    if (context().profile == nullptr)
        return;
    if (std::shared_ptr<profile_edge> edge = registry().take(future_state))
        profile_join(*edge);
}

void profile_pause() noexcept {
    profile_frame* f = context().profile;
    if (f == nullptr || !f->running)
        return;
    close_strand(*f, now_ns());
    f->running = false;
}

void profile_resume() noexcept {
    profile_frame* f = context().profile;
    if (f == nullptr || f->running)
        return;
    f->running = true;
    f->strand_start = now_ns();
}

void profile_forget(const profile_region& region) noexcept {
    registry().forget(region);
}

void profile_absorb(profile_frame& outer, const profile_region& inner) noexcept {
    const std::uint64_t work = inner.work.load(std::memory_order_relaxed);
    const std::uint64_t span = inner.span.load(std::memory_order_relaxed);
    outer.span += span;
    outer.region->work.fetch_add(work, std::memory_order_relaxed);
    outer.region->frames.fetch_add(inner.frames.load(std::memory_order_relaxed),
                                   std::memory_order_relaxed);
}

profile_report make_profile_report(const profile_region& region) noexcept {
    // relaxed: every frame of the region ended before its root was joined (or profile() ran it
    // inline), and those joins order the frames' updates before these loads.
    profile_report r;
    r.work = std::chrono::nanoseconds(region.work.load(std::memory_order_relaxed));
    r.span = std::chrono::nanoseconds(region.span.load(std::memory_order_relaxed));
    r.tasks = region.frames.load(std::memory_order_relaxed);
    return r;
}

} // namespace fj::detail

namespace fj {

std::ostream& operator<<(std::ostream& out, const profile_report& r) {
    const auto ms = [](std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; };
    const std::ios_base::fmtflags flags = out.flags();
    const std::streamsize precision = out.precision();
    out.setf(std::ios_base::fixed, std::ios_base::floatfield);
    out.precision(3);
    out << "work " << ms(r.work) << " ms, span " << ms(r.span) << " ms, parallelism ";
    out.precision(2);
    out << r.parallelism() << " (" << r.tasks << " tasks)";
    out.flags(flags);
    out.precision(precision);
    return out;
}

} // namespace fj
