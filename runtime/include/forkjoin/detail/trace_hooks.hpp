// Trace mode's hooks on the hot paths (docs/tracing.md). With tracing off (the default) a hook is
// one test of a pointer in the worker's own cache line; the recording is out of line
// (runtime/src/trace.cpp), so the inlined fast paths stay small.
#pragma once

namespace fj::detail {

struct worker;
struct task;
class trace_buffer; // runtime/src/trace_buffer.hpp

// Task t (or a join branch run inline) starts on w: opens a slice on w's track and returns true.
// Returns false, recording nothing, for a parked task's resumption record: that is not a task
// (its resumption is traced by the parking code, and the statistics do not count it either).
bool trace_task_begin(worker& w, const task* t) noexcept;
// The task that the calling thread began last (trace_task_begin returned true) has finished.
// Recorded on the calling thread's worker, which is not always the one that began it: a task that
// parked may have resumed elsewhere (its slices moved with it, see trace_buffer::resume_slices()).
void trace_task_end() noexcept;

} // namespace fj::detail
