// Trace mode (docs/tracing.md): the scheduler's side. A traced scheduler owns one trace_buffer per
// worker and writes them, as Chrome / Perfetto trace-event JSON, when it shuts down.
#pragma once

#include "pool.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <forkjoin/options.hpp>

namespace fj::detail {

struct worker;
class trace_buffer;
struct profile_region;

// trace_session and its deleter are declared in pool.hpp.
using trace_session_ptr = std::unique_ptr<trace_session, trace_session_deleter>;

// The trace file for a scheduler with these options: options.trace_file, else the FJ_TRACE
// environment variable, else none (empty).
std::string trace_file_for(const scheduler_options& options);

// Starts tracing the given workers (sets each one's m_trace) into `path`; null if `path` is
// empty. Throws std::bad_alloc.
trace_session_ptr start_trace(const std::string& path, std::size_t events_per_worker,
                              std::uint64_t scheduler_id, const worker_set& workers);

// After the workers have been joined: adds this scheduler's tracks to its trace file and rewrites
// the file (every scheduler traced into the same file appears in it, as one process each). A file
// that cannot be written is reported on stderr: shutdown() does not throw for it.
void finish_trace(trace_session& session) noexcept;

// Whole-run profiling (profile.cpp): FJ_PROFILE (0 or 1) if set, else `configured`. Throws
// std::invalid_argument for any other value.
bool profile_whole_run(bool configured);
// At shutdown: one line on stderr with the run's work, span, parallelism and speed-up bound.
void print_whole_run_profile(const profile_region& region, std::uint64_t scheduler_id,
                             std::size_t workers) noexcept;

// The number of events recorded and dropped (buffer full) so far, for tests and diagnostics.
struct trace_counts {
    std::uint64_t recorded = 0;
    std::uint64_t dropped = 0;
};
trace_counts count_trace_events(const trace_session& session) noexcept;

} // namespace fj::detail
