// Trace mode (docs/tracing.md): per-worker event buffers, and their export as Chrome / Perfetto
// trace-event JSON (one process per scheduler, one thread track per worker).
//
// Nesting: a track shows what its worker's thread executes. Task slices open and close on the
// thread that runs them; a task that parks closes its open slices (the thread stops executing
// them) and reopens them on the worker where it resumes (trace_buffer::suspend_slices /
// resume_slices). So every track is a well-nested sequence of B/E pairs in time order.
#include "observe/trace.hpp"

#include "observe/trace_buffer.hpp"
#include "platform/environment.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <forkjoin/detail/park_reason.hpp>
#include <forkjoin/detail/worker.hpp>

namespace fj::detail {

std::chrono::steady_clock::time_point trace_epoch() noexcept {
    static const std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
    return epoch;
}

struct trace_session {
    std::string path;
    std::uint64_t scheduler_id = 0;
    std::size_t events_per_worker = 0;
    std::size_t workers = 0; // buffers beyond these are spares' and callers' slots
    // One per worker slot, by index; room reserved for every slot the pool may add, so adding one
    // never moves the others (read only after the threads are joined). Beside it, what each
    // slot's track is called.
    std::vector<std::unique_ptr<trace_buffer>> buffers;
    std::vector<const char*> track_names;
};

void trace_session_deleter::operator()(trace_session* session) const noexcept {
    delete session;
}

std::string trace_file_for(const scheduler_options& options) {
    if (!options.trace_file.empty())
        return options.trace_file;
    return environment_trace_file();
}

trace_session_ptr start_trace(const std::string& path, std::size_t events_per_worker,
                              std::uint64_t scheduler_id, const worker_set& workers,
                              std::size_t later_slots) {
    if (path.empty())
        return nullptr;
    (void)trace_epoch(); // fix the origin now, not at the first event
    trace_session_ptr session(
        new trace_session{path, scheduler_id, events_per_worker, workers.size(), {}, {}});
    session->buffers.reserve(workers.size() + later_slots);
    session->track_names.reserve(workers.size() + later_slots);
    for (std::size_t i = 0; i < workers.size(); ++i) {
        session->buffers.push_back(std::make_unique<trace_buffer>(events_per_worker));
        session->track_names.push_back("worker ");
    }
    for (std::size_t i = 0; i < workers.size(); ++i) // set only once nothing can throw
        workers[i].m_trace = session->buffers[i].get();
    return session;
}

void trace_slot(trace_session& session, worker& w) {
    if (w.m_index != session.buffers.size())
        return; // slots are added in order; anything else is a bug upstream: leave it untraced
    session.buffers.push_back(std::make_unique<trace_buffer>(session.events_per_worker));
    session.track_names.push_back(w.m_role == slot_role::caller ? "caller " : "spare ");
    w.m_trace = session.buffers.back().get();
}

trace_counts count_trace_events(const trace_session& session) noexcept {
    trace_counts counts;
    for (const auto& b : session.buffers) {
        counts.recorded += b->events().size();
        counts.dropped += b->dropped();
    }
    return counts;
}

namespace {

// The primitive a park event waits on (park_reason, past `result`), as the trace names it.
const char* primitive_name(std::uint32_t why) noexcept {
    switch (static_cast<park_reason>(why)) {
    case park_reason::result:
        return "result";
    case park_reason::mutex:
        return "fj::mutex";
    case park_reason::condition_variable:
        return "fj::condition_variable";
    case park_reason::latch:
        return "fj::latch";
    case park_reason::barrier:
        return "fj::barrier";
    case park_reason::semaphore:
        return "fj::counting_semaphore";
    case park_reason::channel:
        return "fj::channel";
    case park_reason::sleep:
        return "fj::this_task::sleep";
    case park_reason::shared_mutex:
        return "fj::shared_mutex";
    }
    return "?";
}

// Chrome's "ts" is in microseconds; a fraction keeps the nanoseconds.
void append_timestamp(std::string& out, std::uint64_t ns) {
    char text[32];
    std::snprintf(text, sizeof text, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                  static_cast<unsigned long long>(ns % 1000));
    out += text;
}

void append_event(std::string& out, const char* phase, const char* name, std::uint64_t pid,
                  std::size_t tid, std::uint64_t ns, const char* args = nullptr) {
    out += ",\n{\"ph\":\"";
    out += phase;
    out += "\",\"name\":\"";
    out += name;
    out += "\",\"pid\":";
    out += std::to_string(pid);
    out += ",\"tid\":";
    out += std::to_string(tid);
    out += ",\"ts\":";
    append_timestamp(out, ns);
    if (phase[0] == 'i')
        out += ",\"s\":\"t\""; // an instant on this thread's track
    if (args != nullptr) {
        out += ",\"args\":";
        out += args;
    }
    out += '}';
}

void append_metadata(std::string& out, const char* name, std::uint64_t pid, long tid,
                     const std::string& args) {
    out += ",\n{\"ph\":\"M\",\"name\":\"";
    out += name;
    out += "\",\"pid\":";
    out += std::to_string(pid);
    if (tid >= 0) {
        out += ",\"tid\":";
        out += std::to_string(tid);
    }
    out += ",\"args\":";
    out += args;
    out += '}';
}

// One worker's track. Slices are closed in order; any left open (the buffer filled up) close at
// the track's last timestamp, so the file is well nested even when truncated.
void append_track(std::string& out, std::uint64_t pid, std::size_t tid, const trace_buffer& b) {
    std::vector<const char*> open; // names of the open slices, innermost last
    std::uint64_t last = 0;
    char args[64];
    for (const trace_event& e : b.events()) {
        last = e.ns;
        switch (e.kind) {
        case trace_kind::task_begin:
            append_event(out, "B", "task", pid, tid, e.ns);
            open.push_back("task");
            break;
        case trace_kind::task_reopen:
            append_event(out, "B", "task (resumed)", pid, tid, e.ns);
            open.push_back("task (resumed)");
            break;
        case trace_kind::sleep_begin:
            append_event(out, "B", "sleep", pid, tid, e.ns);
            open.push_back("sleep");
            break;
        case trace_kind::task_end:
        case trace_kind::sleep_end:
            if (!open.empty()) {
                append_event(out, "E", open.back(), pid, tid, e.ns);
                open.pop_back();
            }
            break;
        case trace_kind::steal:
            std::snprintf(args, sizeof args, "{\"victim\":%u}", e.arg);
            append_event(out, "i", "steal", pid, tid, e.ns, args);
            break;
        case trace_kind::take_injected:
            append_event(out, "i", "injected", pid, tid, e.ns);
            break;
        case trace_kind::park:
            if (e.arg == 0) {
                append_event(out, "i", "park", pid, tid, e.ns);
            } else {
                std::snprintf(args, sizeof args, "{\"on\":\"%s\"}", primitive_name(e.arg));
                append_event(out, "i", "park", pid, tid, e.ns, args);
            }
            break;
        case trace_kind::resume:
            std::snprintf(args, sizeof args, "{\"parked_on\":%u}", e.arg);
            append_event(out, "i", "resume", pid, tid, e.ns, args);
            break;
        case trace_kind::spare_start:
            // Why the pool grew: every thread was blocked with work queued, or fj::blocking.
            append_event(out, "i", e.arg == 0 ? "rescue: spare started" : "blocking: spare started",
                         pid, tid, e.ns);
            break;
        case trace_kind::spare_retire:
            append_event(out, "i", "spare retired", pid, tid, e.ns);
            break;
        }
    }
    while (!open.empty()) {
        append_event(out, "E", open.back(), pid, tid, last);
        open.pop_back();
    }
}

// Every event of one scheduler, each preceded by ",\n".
std::string serialize(const trace_session& session, const trace_counts& counts) {
    std::string out;
    const std::uint64_t pid = session.scheduler_id;
    append_metadata(out, "process_name", pid, -1,
                    "{\"name\":\"fj::scheduler #" + std::to_string(pid) + " (" +
                        std::to_string(session.workers) + " workers)\"}");
    for (std::size_t i = 0; i < session.buffers.size(); ++i) {
        append_metadata(out, "thread_name", pid, static_cast<long>(i),
                        std::string("{\"name\":\"") + session.track_names[i] + std::to_string(i) +
                            "\"}");
        append_metadata(out, "thread_sort_index", pid, static_cast<long>(i),
                        "{\"sort_index\":" + std::to_string(i) + "}");
    }
    if (counts.dropped != 0)
        append_metadata(out, "process_labels", pid, -1,
                        "{\"labels\":\"" + std::to_string(counts.dropped) +
                            " events dropped: raise scheduler_options::trace_events_per_worker\"}");
    for (std::size_t i = 0; i < session.buffers.size(); ++i)
        append_track(out, pid, i, *session.buffers[i]);
    return out;
}

// The schedulers traced into each file so far: a file is rewritten whole at every shutdown, so
// it always holds every scheduler that has finished (several pools, or FJ_TRACE for all).
struct trace_files {
    std::mutex mutex;
    std::map<std::string, std::vector<std::string>> parts; // guarded by mutex
};

trace_files& files() {
    static trace_files* f = new trace_files; // never destroyed: schedulers may shut down at exit
    return *f;
}

} // namespace

void finish_trace(trace_session& session) noexcept {
    try {
        const trace_counts counts = count_trace_events(session);
        std::string part = serialize(session, counts);
        trace_files& f = files();
        std::lock_guard lock(f.mutex);
        std::vector<std::string>& parts = f.parts[session.path];
        parts.push_back(std::move(part));
        std::FILE* file = std::fopen(session.path.c_str(), "w");
        if (file == nullptr) {
            std::fprintf(stderr, "fj: cannot write the trace file '%s': %s\n", session.path.c_str(),
                         std::strerror(errno));
            return;
        }
        // The metadata event first: every later event starts with ",\n".
        std::fputs("{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,"
                   "\"args\":{\"name\":\"forkjoin trace\"}}",
                   file);
        for (const std::string& p : parts)
            std::fwrite(p.data(), 1, p.size(), file);
        std::fputs("\n],\"displayTimeUnit\":\"ns\"}\n", file);
        const bool failed = std::ferror(file) != 0;
        if (std::fclose(file) != 0 || failed)
            std::fprintf(stderr, "fj: writing the trace file '%s' failed\n", session.path.c_str());
        if (counts.dropped != 0)
            std::fprintf(stderr,
                         "fj: trace '%s': %llu events dropped (a worker's buffer was full); raise "
                         "scheduler_options::trace_events_per_worker\n",
                         session.path.c_str(), static_cast<unsigned long long>(counts.dropped));
    } catch (const std::exception& e) { // std::bad_alloc while serializing
        std::fprintf(stderr, "fj: could not write the trace file '%s': %s\n", session.path.c_str(),
                     e.what());
    }
}

} // namespace fj::detail
