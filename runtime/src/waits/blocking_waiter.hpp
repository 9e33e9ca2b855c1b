// A thread blocked on a completion (docs/design/completion.md): the waiter record of a wait
// that cannot park. The record lives on the waiting thread's stack until the producer's wake has
// signalled it: the wake is the producer's last touch.
#pragma once

#include <condition_variable>
#include <mutex>

#include <forkjoin/detail/completion.hpp>

namespace fj::detail {

struct blocking_waiter : waiter {
    std::mutex mutex;
    std::condition_variable woken_cv;
    bool woken = false; // guarded by mutex

    blocking_waiter() { m_wake = &wake; }

    static void wake(waiter* w) noexcept {
        auto* self = static_cast<blocking_waiter*>(w);
        // Notify under the lock: the waiter cannot return (and destroy the record) before we
        // release it, and releasing a mutex its next owner may destroy is allowed by POSIX.
        std::lock_guard lock(self->mutex);
        self->woken = true;
        self->woken_cv.notify_one();
    }

    void wait_woken() {
        std::unique_lock lock(mutex);
        woken_cv.wait(lock, [&] { return woken; });
    }
};

} // namespace fj::detail
