// fj::latch (forkjoin/latch.hpp); the protocol is detail/latch_protocol.hpp
// (docs/design/sync.md#steps, step 8).
#include <string>

#include <forkjoin/errors.hpp>
#include <forkjoin/latch.hpp>

namespace fj {

latch::latch(std::ptrdiff_t expected) : m_protocol(expected) {
    if (expected < 0)
        detail::throw_invalid_argument("fj::latch: the expected count is negative (" +
                                       std::to_string(expected) + ")");
}

latch::~latch() {
    if (m_protocol.has_waiters())
        detail::report_destroyed_with_waiters("fj::latch");
}

void latch::count_down(std::ptrdiff_t n) {
    std::ptrdiff_t count = 0;
    detail::waiter_queue opened;
    if (!m_protocol.count_down(n, count, opened))
        detail::throw_invalid_argument("fj::latch::count_down(" + std::to_string(n) +
                                       ") with a count of " + std::to_string(count));
    detail::release_all(opened);
}

void latch::wait() const {
    if (try_wait())
        return;
    detail::sync_waiter w;
    if (m_protocol.ready_or_queue(w))
        return;
    detail::wait_released(w, detail::park_reason::latch);
}

bool latch::open_or_queue(void* protocol, std::uint64_t, detail::sync_waiter& w) {
    return static_cast<detail::latch_protocol<>*>(protocol)->ready_or_queue(w);
}

void latch::arrive_and_wait(std::ptrdiff_t n) {
    count_down(n);
    wait();
}

} // namespace fj
