// The names the runtime gives the threads it starts, as `top -H`, `ps -L`, gdb, perf and
// /proc/<pid>/task/<tid>/comm show them: fj-worker, fj-spare, fj-monitor, fj-timers.
#pragma once

namespace fj::detail {

// Names the calling thread (at most 15 characters are kept). Best effort: a failure leaves the
// name it inherited.
void name_this_thread(const char* name) noexcept;

} // namespace fj::detail
