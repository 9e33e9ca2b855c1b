// The live pools by id (pool_registry.hpp). A vector under one mutex: there are few
// pools, and the lookup runs only when then() is called on a future that is already ready
// from outside the antecedent's own pool.
#include "lifecycle/pool_registry.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include <forkjoin/detail/pool_core.hpp>

namespace fj::detail {
namespace {

struct registry {
    std::mutex mutex;
    std::vector<std::pair<std::uint64_t, pool_core*>> live; // guarded by mutex
};

registry& the_registry() {
    // Never destroyed: schedulers that are statics themselves (the default scheduler among them)
    // unregister from their destructors at exit, in an order no function-local static could
    // promise to outlive. Still reachable, so no leak checker reports it.
    static registry* r = new registry;
    return *r;
}

// relaxed: only uniqueness matters, which the RMW gives whatever the order.
std::atomic<std::uint64_t> g_next_id{1};

} // namespace

std::uint64_t next_pool_id() noexcept {
    return g_next_id.fetch_add(1, std::memory_order_relaxed);
}

void register_pool(pool_core& p) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    r.live.emplace_back(p.m_id, &p);
}

void unregister_pool(std::uint64_t id) noexcept {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    auto it =
        std::find_if(r.live.begin(), r.live.end(), [&](const auto& e) { return e.first == id; });
    if (it != r.live.end()) {
        *it = r.live.back();
        r.live.pop_back();
    }
}

bool with_live_pool(std::uint64_t id, function_ref<bool(pool_core&)> fn) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    for (const auto& [key, p] : r.live)
        if (key == id)
            return fn(*p);
    return false;
}

void lock_pool_registry() noexcept {
    the_registry().mutex.lock();
}

void unlock_pool_registry() noexcept {
    the_registry().mutex.unlock();
}

} // namespace fj::detail
