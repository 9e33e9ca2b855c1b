// fj::latch (forkjoin/latch.hpp; docs/design/sync.md#steps, step 8). The count is an atomic; the
// waiters are a queue under m_lock. A waiter re-reads the count under the lock before queuing, and
// the count-down that reaches zero takes the lock after its decrement to release the queue: either
// the waiter's re-read comes after that decrement (it sees zero and does not queue) or its
// queuing comes before the releaser's lock (it is released).
#include <string>

#include <forkjoin/errors.hpp>
#include <forkjoin/latch.hpp>

namespace fj {

latch::latch(std::ptrdiff_t expected) : m_count(expected) {
    if (expected < 0)
        detail::throw_invalid_argument("fj::latch: the expected count is negative (" +
                                       std::to_string(expected) + ")");
}

latch::~latch() {
    if (!m_waiters.empty())
        detail::report_destroyed_with_waiters("fj::latch");
}

void latch::count_down(std::ptrdiff_t n) {
    std::ptrdiff_t count = m_count.load(std::memory_order_relaxed);
    do {
        if (n < 0 || n > count)
            detail::throw_invalid_argument("fj::latch::count_down(" + std::to_string(n) +
                                           ") with a count of " + std::to_string(count));
        // acq_rel: release publishes what this thread did before counting down; acquire makes
        // the one that reaches zero carry everybody's (the decrements form one release sequence)
        // to the waiters it releases.
    } while (!m_count.compare_exchange_weak(count, count - n, std::memory_order_acq_rel,
                                            std::memory_order_relaxed));
    if (count != n || n == 0)
        return;
    detail::waiter_queue all;
    {
        std::lock_guard guard(m_lock);
        all = m_waiters.take_all();
        for (detail::sync_waiter* w = all.front(); w != nullptr; w = w->next)
            w->outcome = detail::wait_outcome::granted;
    }
    detail::release_all(all);
}

void latch::wait() const {
    if (try_wait())
        return;
    detail::sync_waiter w;
    {
        std::lock_guard guard(m_lock);
        if (try_wait())
            return;
        m_waiters.push_back(w);
    }
    detail::wait_released(w, detail::park_reason::latch);
}

void latch::arrive_and_wait(std::ptrdiff_t n) {
    count_down(n);
    wait();
}

} // namespace fj
