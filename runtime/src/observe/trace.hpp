// Trace mode (docs/tracing.md): a traced pool's session owns one trace_buffer per worker and
// writes them, as Chrome / Perfetto trace-event JSON, when the pool stops. An observer:
// events.cpp starts and finishes it and records the workers' events into its buffers.
#pragma once

#include "state/pool.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <forkjoin/options.hpp>

namespace fj::detail {

struct worker;
class trace_buffer;

// trace_session and its deleter are declared in pool.hpp.
using trace_session_ptr = std::unique_ptr<trace_session, trace_session_deleter>;

// The trace file for a scheduler with these options: options.trace_file, else the FJ_TRACE
// environment variable, else none (empty).
std::string trace_file_for(const scheduler_options& options);

// Starts tracing the given workers (sets each one's m_trace) into `path`, with room for
// `later_slots` more; null if `path` is empty. Throws std::bad_alloc.
trace_session_ptr start_trace(const std::string& path, std::size_t events_per_worker,
                              std::uint64_t scheduler_id, const worker_set& workers,
                              std::size_t later_slots);
// A spare's or a caller's slot, about to be added to the pool's worker set, gets its buffer (sets
// w.m_trace). Throws std::bad_alloc.
void trace_slot(trace_session& session, worker& w);

// After the workers have been joined: adds this scheduler's tracks to its trace file and rewrites
// the file (every scheduler traced into the same file appears in it, as one process each). A file
// that cannot be written is reported on stderr: shutdown() does not throw for it.
void finish_trace(trace_session& session) noexcept;

// Events recorded and dropped (buffers full), over every worker.
struct trace_counts {
    std::uint64_t recorded = 0;
    std::uint64_t dropped = 0;
};
trace_counts count_trace_events(const trace_session& session) noexcept;

} // namespace fj::detail
