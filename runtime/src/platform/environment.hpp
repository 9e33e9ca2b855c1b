// The environment variables the runtime reads (environment.cpp, all in one place; the table in
// docs/api.md#environment-variables). A bad value throws std::invalid_argument naming the
// variable, the value and what is accepted.
#pragma once

#include <cstddef>
#include <string>

namespace fj::detail {

// FJ_WORKERS: the default worker count; 0 when unset. Throws for anything but 1..max_workers.
std::size_t environment_worker_count();
// Parses a worker count as FJ_WORKERS gives it. Throws std::invalid_argument naming the value.
std::size_t parse_worker_count(const char* text);

// FJ_PARKING (1 or 0): whether waiting tasks park on fibers; `configured` (the scheduler's
// park_waiting_tasks option) when unset or empty.
bool parking_enabled(bool configured);

// FJ_TRACE: the trace file for schedulers whose options name none; empty when unset.
std::string environment_trace_file();

// FJ_PROFILE (1 or 0): whether a scheduler profiles its whole run; `configured` (its
// profile_whole_run option) when unset or empty.
bool profile_whole_run(bool configured);

// FJ_SYMMETRIC_BARRIER=1: the sleep protocol uses seq_cst stores instead of the asymmetric
// barrier (to compare the two, or to rule the barrier out while debugging).
bool symmetric_barrier_forced() noexcept;

} // namespace fj::detail
