// A kernel wait of the runtime's own that ends by itself, declared to the rescue of blocked pools
// so that it never passes for a block (docs/design/rescue.md, step 3). Starting a thread is one:
// under ThreadSanitizer pthread_create waits until the new thread runs, which on a loaded machine
// can take longer than the monitor's two looks.
#pragma once

#include "state/pool.hpp"
#include "state/spare_hooks.hpp"

#include <cstddef>

namespace fj::detail {

class own_wait_scope {
public:
    // On a worker of a pool with a rescue: its slot counts as a runner until the destructor.
    // Elsewhere: nothing.
    own_wait_scope() noexcept {
        if (worker* w = current_worker_with_rescue()) {
            m_hooks = pool_of(*w->m_pool).m_spare_hooks;
            m_slot = w->m_index;
            m_hooks->on_own_wait(m_slot, true);
        }
    }
    // The scope holds no park: it ends on the thread and slot it began on.
    ~own_wait_scope() {
        if (m_hooks != nullptr)
            m_hooks->on_own_wait(m_slot, false);
    }
    own_wait_scope(const own_wait_scope&) = delete;
    own_wait_scope& operator=(const own_wait_scope&) = delete;

private:
    spare_hooks* m_hooks = nullptr;
    std::size_t m_slot = 0;
};

} // namespace fj::detail
