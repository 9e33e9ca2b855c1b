// Fault injection for the reliability tests (see detail/fault_injection.hpp).
#include <mutex>
#include <new>
#include <system_error>

#include <forkjoin/detail/fault_injection.hpp>

namespace fj::detail::fault_injection {

std::atomic<bool> g_armed{false};

namespace {

struct plan {
    bool active = false;
    int skip = 0;
    int fail = 0;
};

std::mutex g_mutex;
plan g_plans[3]; // guarded by g_mutex

} // namespace

void arm(site where, int skip, int fail) noexcept {
    std::lock_guard lock(g_mutex);
    g_plans[static_cast<int>(where)] = {true, skip, fail};
    g_armed.store(true, std::memory_order_relaxed);
}

void disarm() noexcept {
    std::lock_guard lock(g_mutex);
    for (plan& p : g_plans)
        p = {};
    g_armed.store(false, std::memory_order_relaxed);
}

void check_slow(site where) {
    bool fail_now = false;
    {
        std::lock_guard lock(g_mutex);
        plan& p = g_plans[static_cast<int>(where)];
        if (p.active) {
            if (p.skip > 0) {
                --p.skip;
            } else if (p.fail > 0) {
                --p.fail;
                fail_now = true;
            }
        }
    }
    if (!fail_now)
        return;
    if (where == site::thread_start)
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                "fault injection: thread creation refused");
    throw std::bad_alloc();
}

} // namespace fj::detail::fault_injection
