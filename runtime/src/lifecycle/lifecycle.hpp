// A pool's lifecycle (docs/design/shutdown.md): the one place that knows every mechanism builds a
// pool, starts and ends it, and reports on it.
#pragma once

#include "state/pool.hpp"

#include <forkjoin/options.hpp>
#include <forkjoin/stats.hpp>

namespace fj::detail {

// Builds a pool for `handle`, starts its workers and registers it for continuation routing.
// Throws std::invalid_argument for bad options, std::runtime_error if a thread cannot start.
pool* make_pool(fj::scheduler& handle, const scheduler_options& options);
// Finishes everything submitted, then joins the workers. Idempotent.
void shutdown(pool& p);
// Unregisters, shuts down and frees the pool.
void destroy_pool(pool* p) noexcept;

// Statistics snapshot (stats_report.cpp).
scheduler_stats snapshot(const pool& p);

} // namespace fj::detail
