// What a pool's searchers sample, and the hint that points them at work
// (docs/design/find-work.md#sampling). A searcher spinning for work probes, between two pauses,
// the hint's victim and k_sampled_victims random ones (loop/find_work.cpp, find_work_sampled)
// instead of every worker, so its probes per look do not grow with the pool; a full look tries
// the hint first too (find_work), so a worker woken for a push finds the pusher at its first
// probe. The hint names a worker that pushed while workers searched or slept: its push, which
// reads the sleep word anyway, sees them there (pool_core::m_push_notice) and names itself if no
// worker is named (sleep/sleep.cpp, notice_push); a look that finds nothing there clears it. So
// the hint's line is written about once per stale hint, not once per push, and pushers only read
// it.
#pragma once

#include "state/pool.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace fj::detail {

inline constexpr std::size_t k_sampled_victims = 3;

// Whether a pool of this many workers (pool_core::m_worker_count: spare and caller slots not
// counted) samples: in smaller ones a full pass probes no more.
constexpr bool samples_victims(std::size_t workers) noexcept {
    return workers > k_sampled_victims + 1;
}

// The fields of the sleep word a push looks at (pool_core::m_push_notice): the sleepers, and in
// a pool that samples, the searchers.
constexpr std::uint64_t push_notice_fields(std::size_t workers) noexcept {
    return samples_victims(workers) ? sleep_word::k_waiters | sleep_word::k_searchers
                                    : sleep_word::k_waiters;
}

// Names w's slot as the hint unless one is named. relaxed: a hint; the steal from w's deque
// synchronizes. A lost race names one of the racing pushers, which is as good.
inline void point_searchers_at(pool& p, const worker& w) noexcept {
    if (p.m_steal_hint.load(std::memory_order_relaxed) == pool::k_no_hint)
        p.m_steal_hint.store(static_cast<std::uint32_t>(w.m_index), std::memory_order_relaxed);
}

// A searcher found nothing at the hint's victim `hint`: clears it, unless it names another by now.
inline void clear_stale_hint(pool& p, std::uint32_t hint) noexcept {
    // relaxed: a hint. The load first: only one of the searchers that saw it stale writes.
    if (p.m_steal_hint.load(std::memory_order_relaxed) == hint)
        (void)p.m_steal_hint.compare_exchange_strong(hint, pool::k_no_hint,
                                                     std::memory_order_relaxed);
}

} // namespace fj::detail
