// fj::barrier's core (forkjoin/barrier.hpp; docs/design/sync.md#steps, step 10). Everything is
// under m_lock: the count of arrivals left, the phase number and the queue of waiters. The arrival
// that brings the count to zero runs the completion function outside the lock, then completes
// the phase: the phase number moves on, the count is reset, and the phase's waiters are
// released. A waiter queues only while the phase it arrived at is the current one.
#include <string>

#include <forkjoin/barrier.hpp>
#include <forkjoin/errors.hpp>

namespace fj::detail {

barrier_core::barrier_core(std::ptrdiff_t expected) : m_expected(expected), m_left(expected) {
    if (expected < 0)
        throw_invalid_argument("fj::barrier: the expected count is negative (" +
                               std::to_string(expected) + ")");
}

barrier_core::~barrier_core() {
    if (!m_waiters.empty())
        report_destroyed_with_waiters("fj::barrier");
}

std::pair<std::uint64_t, bool> barrier_core::arrive(std::ptrdiff_t n, bool drop) {
    std::lock_guard guard(m_lock);
    if (n <= 0 || n > m_left)
        throw_invalid_argument("fj::barrier: " + std::to_string(n) +
                               " arrivals where the phase has " + std::to_string(m_left) + " left");
    m_left -= n;
    if (drop)
        --m_expected;
    return {m_phase, m_left == 0};
}

void barrier_core::complete_phase() noexcept {
    waiter_queue all;
    {
        std::lock_guard guard(m_lock);
        ++m_phase;
        m_left = m_expected;
        all = m_waiters.take_all_marked(wait_outcome::granted);
    }
    release_all(all);
}

bool barrier_core::completed_or_queue(void* core, std::uint64_t phase, sync_waiter& w) {
    auto& self = *static_cast<barrier_core*>(core);
    std::lock_guard guard(self.m_lock);
    if (self.m_phase != phase)
        return true;
    self.m_waiters.push_back(w);
    return false;
}

void barrier_core::wait(std::uint64_t phase) {
    sync_waiter w;
    if (!completed_or_queue(this, phase, w))
        wait_released(w, park_reason::barrier);
}

} // namespace fj::detail
