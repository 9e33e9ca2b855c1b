// The caller's part in its own blocking call (docs/design/callers.md): for a call made outside
// every pool, a caller_scope makes the calling thread one of the pool's threads until the scope
// ends, so the call's root runs right here instead of being queued for a worker to pick up.
#pragma once

#include "current.hpp"
#include "pool_core.hpp"

#include <cstddef>

namespace fj::detail {

class caller_scope {
public:
    // Enters p as a caller if the calling thread is outside every pool and p has a caller's slot
    // free; entered() says whether it did. Throws fj::scheduler_closed once p has begun to shut
    // down (and std::logic_error in the child of a process fork), before anything runs.
    explicit caller_scope(pool_core& p)
        : m_pool(p), m_outer(current_pool()),
          m_slot(current_worker() == nullptr ? enter_as_caller(p) : k_not_entered) {}
    ~caller_scope() {
        if (m_slot != k_not_entered)
            leave_as_caller(m_pool, m_slot, m_outer);
    }
    caller_scope(const caller_scope&) = delete;
    caller_scope& operator=(const caller_scope&) = delete;

    bool entered() const noexcept { return m_slot != k_not_entered; }

private:
    static constexpr std::size_t k_not_entered = static_cast<std::size_t>(-1);
    pool_core& m_pool;
    pool_core* const m_outer; // the pool whose task this thread runs (an outside helper's), or null
    const std::size_t m_slot;
};

} // namespace fj::detail
