// The observers' dispatch (docs/tracing.md#observers): every observation point of the runtime
// arrives here, and only here, and goes to the observers it concerns:
//   - trace mode: the trace buffer of the worker's pool (worker::m_trace), per pool;
//   - the profiler: the calling thread's innermost measured frame (thread_context::profile),
//     per fj::profile region;
//   - whole-run profiling: a region owned by the pool, whose roots are the pool's submissions.
// The runtime calls in only while observed() (observe.hpp): some observer exists somewhere.
#include "observe/events.hpp"

#include "observe/trace.hpp"
#include "observe/trace_buffer.hpp"
#include "observe/whole_run_profile.hpp"
#include "platform/environment.hpp"

#include <memory>
#include <utility>

#include <forkjoin/detail/current.hpp>
#include <forkjoin/detail/profile_frame.hpp>

namespace fj::detail {

std::atomic<std::uint32_t> g_observers{0};

namespace {

// The run function of a parked task's record (set_resumption_run). relaxed: every pool that parks
// stores the same value before its workers start, and thread creation orders that store before
// any of their reads.
std::atomic<task::run_fn> g_resumption_run{nullptr};

// A parked task's record is queued like a task but is none: its resumption is traced by
// on_resume.
bool is_resumption(const task* t) noexcept {
    return t->m_run == g_resumption_run.load(std::memory_order_relaxed);
}

} // namespace

void set_resumption_run(task::run_fn run) noexcept {
    g_resumption_run.store(run, std::memory_order_relaxed);
}

// --- A pool's observers --------------------------------------------------------------------------

void resolve_observer_options(scheduler_options& o) {
    o.trace_file = trace_file_for(o);
    o.profile_whole_run = profile_whole_run(o.profile_whole_run);
}

void start_observing(pool& p) {
    if (p.m_options.profile_whole_run)
        p.m_whole_run_profile = std::make_shared<profile_region>(); // counts itself
    p.m_trace = start_trace(p.m_options.trace_file, p.m_options.trace_events_per_worker, p.m_id,
                            p.m_workers, p.m_workers.capacity() - p.m_workers.size());
    if (p.m_trace != nullptr)
        observer_attached(); // before the workers start: they see it (thread creation orders)
}

void stop_observing(pool& p) noexcept {
    if (p.m_trace != nullptr) {
        finish_trace(*p.m_trace);
        p.m_trace.reset();
        observer_detached();
    }
    if (p.m_whole_run_profile != nullptr) {
        print_whole_run_profile(*p.m_whole_run_profile, p.m_id, p.m_worker_count);
        p.m_whole_run_profile.reset(); // edges of unjoined children may keep it a while longer
    }
}

void abandon_observing(pool& p) noexcept {
    if (p.m_trace != nullptr) {
        p.m_trace.reset();
        observer_detached();
    }
}

// --- Tasks, forks, joins and waits (the inline paths' events) -----------------------------------

bool on_task_begin(worker& w, const task* t) noexcept {
    // A resumption record is no task: its resumption is traced by on_resume. A task taken over
    // by its consumer (lifecycle/take_over.cpp) has no record here (t is null) and is traced.
    if (w.m_trace == nullptr || (t != nullptr && is_resumption(t)))
        return false;
    w.m_trace->begin_task();
    return true;
}

void on_task_end() noexcept {
    // current_worker(): the task may have parked and resumed on another worker of the same pool,
    // all of whose workers trace alike.
    current_worker()->m_trace->end_task();
}

std::shared_ptr<profile_edge> on_child_created(pool_core& p, bool is_submit) {
    if (context().profile != nullptr)
        return profile_fork_shared(); // a child of the measured frame running here
    const std::shared_ptr<profile_region>& whole_run = pool_of(p).m_whole_run_profile;
    if (is_submit && whole_run != nullptr) {
        auto edge = std::make_shared<profile_edge>(); // a root of the whole run: no prefix
        edge->region = whole_run;
        return edge;
    }
    return nullptr;
}

void on_child_started(const void* future_state, std::shared_ptr<profile_edge> edge) {
    // Only a measured frame's child: its get() joins the edge. A root of a whole run has no
    // joiner to measure.
    if (context().profile != nullptr)
        profile_register(future_state, std::move(edge));
}

bool on_join_fork(profile_edge& edge) noexcept {
    if (context().profile == nullptr)
        return false;
    profile_fork(edge);
    return true;
}

void on_join_end(const profile_edge& edge) noexcept {
    profile_join(edge);
}

void on_future_joined(const void* future_state) noexcept {
    profile_join_future(future_state);
}

bool on_wait_begin() noexcept {
    if (context().profile == nullptr)
        return false;
    profile_pause();
    return true;
}

void on_wait_end() noexcept {
    profile_resume();
}

// --- The worker loop and parking -----------------------------------------------------------------

void on_steal(worker& thief, const worker& victim) noexcept {
    if (thief.m_trace != nullptr)
        thief.m_trace->record(trace_kind::steal, static_cast<std::uint32_t>(victim.m_index));
}

void on_take_injected(worker& w, const task* t) noexcept {
    // A parked task's record is no task: its resumption is traced by on_resume.
    if (w.m_trace != nullptr && !is_resumption(t))
        w.m_trace->record(trace_kind::take_injected);
}

void on_sleep_begin(worker& w) noexcept {
    if (w.m_trace != nullptr)
        w.m_trace->record(trace_kind::sleep_begin);
}

void on_sleep_end(worker& w) noexcept {
    if (w.m_trace != nullptr)
        w.m_trace->record(trace_kind::sleep_end);
}

void on_slot_added(pool& p, worker& w) {
    if (p.m_trace != nullptr)
        trace_slot(*p.m_trace, w);
}

void on_spare_start(worker& w, spare_reason reason) noexcept {
    if (w.m_trace != nullptr)
        w.m_trace->record(trace_kind::spare_start, static_cast<std::uint32_t>(reason));
}

void on_spare_retire(worker& w) noexcept {
    if (w.m_trace != nullptr)
        w.m_trace->record(trace_kind::spare_retire);
}

parked_observation on_park(worker& w, park_reason why) noexcept {
    parked_observation parked;
    parked.active = true;
    // This thread stops running the task's open slices here; they reopen where it resumes.
    if (w.m_trace != nullptr)
        parked.open_slices = w.m_trace->suspend_slices(static_cast<std::uint32_t>(why));
    // The profiler's frames live on the parked stack: they leave with it and come back wherever
    // it resumes; the fresh loop fiber starts outside any frame.
    parked.frames = std::exchange(context().profile, nullptr);
    return parked;
}

void on_resume(worker& w, const parked_observation& parked, std::size_t parked_on) noexcept {
    context().profile = parked.frames;
    if (w.m_trace != nullptr)
        w.m_trace->resume_slices(parked.open_slices, static_cast<std::uint32_t>(parked_on));
}

} // namespace fj::detail
