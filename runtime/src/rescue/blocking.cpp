// fj::blocking's declaration (docs/design/rescue.md, step 8).
#include "rescue/rescue.hpp"
#include "state/pool.hpp"

#include <forkjoin/blocking.hpp>

namespace fj::detail {

blocking_scope::blocking_scope() noexcept {
    worker* w = current_worker_with_rescue();
    if (w == nullptr)
        return; // off every pool, no rescue, or a pool whose threads stayed in a fork()'s parent
    pool& p = pool_of(*w->m_pool);
    const rescuer::ticket spare = p.m_rescue->begin_blocking(w->m_index);
    m_pool = &p;
    m_slot = w->m_index;
    m_spare = spare.index;
    m_spare_start = spare.start;
}

blocking_scope::~blocking_scope() {
    if (m_pool == nullptr)
        return;
    // The slot this thread declared, even if f parked and the task resumed on another worker.
    pool_of(*m_pool).m_rescue->end_blocking(m_slot, {m_spare, m_spare_start});
}

} // namespace fj::detail
