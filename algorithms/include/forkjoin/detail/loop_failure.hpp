// How a parallel loop ends early: the first failure by position rather than by time, or a stop
// request.
//
// A body that throws at offset k records (k, exception). Chunks check limit() before they start
// and stop at it, so everything above the lowest failing offset is cancelled while everything below
// it still runs. That makes the winner deterministic: the exception rethrown to the caller is the
// one a serial loop would have thrown (the lowest offset that throws), provided the bodies
// themselves are deterministic. Some bodies above it may have run too (chunks already started).
//
// A stop request (cancel(), from the std::stop_callback the loop registers) lowers the limit to 0
// for good: no chunk starts after it, and the loop ends with fj::operation_cancelled unless a body
// threw (a real error outranks the request; docs/design/loops.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>

#include <forkjoin/errors.hpp>

namespace fj::detail {

class loop_failure {
public:
    static constexpr std::size_t k_none = std::numeric_limits<std::size_t>::max();

    // Offsets at or above this are not started. relaxed: only a hint to stop early; which
    // exception wins is decided under the mutex, and the caller reads it after joining every chunk
    // (the join is the happens-before edge).
    std::size_t limit() const noexcept { return m_limit.load(std::memory_order_relaxed); }

    // Called from the catch block of the body that threw at `offset`.
    void record(std::size_t offset, std::exception_ptr error) noexcept {
        std::lock_guard lock(m_mutex);
        if (offset < m_offset) {
            m_offset = offset;
            m_error = std::move(error);
            if (!m_cancelled) // under the mutex: a stop's limit of 0 is never raised again
                m_limit.store(offset, std::memory_order_relaxed);
        }
    }

    // A stop request: called by the requesting thread, possibly while chunks run.
    void cancel() noexcept {
        std::lock_guard lock(m_mutex);
        m_cancelled = true;
        m_limit.store(0, std::memory_order_relaxed);
    }

    // After every chunk has finished and the stop callback is gone: the lowest failure, else
    // fj::operation_cancelled naming `who` if a stop request came while the loop ran.
    void rethrow_if_failed(const char* who) {
        std::lock_guard lock(m_mutex); // pairs with cancel() on the requesting thread
        if (m_error)
            std::rethrow_exception(m_error);
        if (m_cancelled)
            throw_operation_cancelled(who);
    }

private:
    std::atomic<std::size_t> m_limit{k_none};
    std::mutex m_mutex;
    std::size_t m_offset = k_none; // guarded by m_mutex
    std::exception_ptr m_error;    // guarded by m_mutex until the loop has joined
    bool m_cancelled = false;      // guarded by m_mutex
};

} // namespace fj::detail
