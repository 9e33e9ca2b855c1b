// fj::channel<T>: a bounded multi-producer multi-consumer channel with Go's semantics, whose
// waiters are tasks, not threads. send() on a full channel and receive() on an empty one park
// the calling task (its worker runs other work); off the pool, and where a task may not park,
// they block the thread.
//
//   fj::channel<int> ch(16);         // capacity 16; 0 makes every send wait for its receiver
//   ch.send(1);                      // throws fj::channel_closed once the channel is closed
//   std::optional<int> v = ch.receive(); // empty once the channel is closed and drained
//   ch.close();                      // wakes every waiter; values already sent are still received
//
// Senders and receivers are served in arrival order. In a coroutine, with
// <forkjoin/sync_await.hpp>: co_await ch.send_async(v), co_await ch.receive_async()
// (docs/coroutines.md). docs/sync.md; the protocol: docs/design/sync.md#steps, step 11.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <forkjoin/detail/sync_waiter.hpp>
#include <forkjoin/errors.hpp>

namespace fj {

template <class T>
class channel {
    // Values move under the channel's lock, from a sender's frame to a receiver's.
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_destructible_v<T>,
                  "fj::channel<T> needs a T that moves and is destroyed without throwing");

public:
    // The buffer is allocated here, once: nothing allocates while the channel's lock is held.
    explicit channel(std::size_t capacity) : m_ring(capacity) {}
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;
    // Destroying one that a task or thread waits on is a bug: reported, then std::abort().
    ~channel() {
        if (!m_senders.empty() || !m_receivers.empty())
            detail::report_destroyed_with_waiters("fj::channel");
    }

    std::size_t capacity() const noexcept { return m_ring.size(); }

    // Waits while the channel is full (and for a receiver, at capacity 0). Throws
    // fj::channel_closed if the channel is closed, or is closed while this waits.
    void send(T value) {
        detail::sync_waiter w;
        if (!send_or_queue(value, w))
            detail::wait_released(w, detail::park_reason::channel);
        if (w.outcome == detail::wait_outcome::closed)
            detail::throw_channel_closed("send");
    }

    // Sends if that needs no wait; false (and `value` untouched) otherwise. Throws
    // fj::channel_closed if the channel is closed.
    bool try_send(T&& value) {
        std::unique_lock guard(m_lock);
        if (m_closed)
            detail::throw_channel_closed("send");
        return offer(value, guard);
    }
    bool try_send(const T& value) {
        T copy(value);
        return try_send(std::move(copy));
    }

    // The next value; waits while the channel is empty and open. Empty once the channel is closed
    // and every value sent before has been received.
    std::optional<T> receive() {
        std::optional<T> result;
        detail::sync_waiter w;
        if (!receive_or_queue(result, w))
            detail::wait_released(w, detail::park_reason::channel);
        return result; // empty if close() released us
    }

    // The next value if one is there now; empty otherwise (is_closed() tells the two apart).
    std::optional<T> try_receive() {
        std::optional<T> result;
        std::unique_lock guard(m_lock);
        take(result, guard);
        return result;
    }

    // No more sends: releases every waiting receiver (with nothing) and sender (which throws).
    // Values already buffered are still received. Throws fj::channel_closed the second time.
    void close() {
        detail::waiter_queue receivers, senders;
        {
            std::lock_guard guard(m_lock);
            if (m_closed)
                detail::throw_channel_closed("close");
            m_closed = true;
            receivers = m_receivers.take_all_marked(detail::wait_outcome::closed);
            senders = m_senders.take_all_marked(detail::wait_outcome::closed);
        }
        detail::release_all(receivers);
        detail::release_all(senders);
    }

    bool is_closed() const {
        std::lock_guard guard(m_lock);
        return m_closed;
    }

    // <forkjoin/sync_await.hpp>, in a coroutine (see above).
    class send_awaiter;
    class receive_awaiter;
    [[nodiscard]] send_awaiter send_async(T value) noexcept;
    [[nodiscard]] receive_awaiter receive_async() noexcept;

private:
    // Sent or closed (true; w's outcome says which), or `w` queued (false).
    bool send_or_queue(T& value, detail::sync_waiter& w) {
        std::unique_lock guard(m_lock);
        if (m_closed) {
            w.outcome = detail::wait_outcome::closed;
            return true;
        }
        if (offer(value, guard)) { // may have dropped the lock
            w.outcome = detail::wait_outcome::granted;
            return true;
        }
        w.payload = &value;
        m_senders.push_back(w);
        return false;
    }

    bool receive_or_queue(std::optional<T>& result, detail::sync_waiter& w) {
        std::unique_lock guard(m_lock);
        if (take(result, guard) || m_closed)
            return true;
        w.payload = &result;
        m_receivers.push_back(w);
        return false;
    }

    // Under the lock: hands `value` to the oldest waiting receiver, or buffers it if there is
    // room. The lock is dropped before a receiver is released. False if neither.
    bool offer(T& value, std::unique_lock<std::mutex>& guard) {
        if (!m_receivers.empty()) {
            detail::sync_waiter& r = m_receivers.pop_front();
            static_cast<std::optional<T>*>(r.payload)->emplace(std::move(value));
            r.outcome = detail::wait_outcome::granted;
            guard.unlock();
            detail::release(r);
            return true;
        }
        if (m_size < m_ring.size()) {
            push(std::move(value));
            return true;
        }
        return false;
    }

    // Under the lock: the oldest value, from the buffer (refilled from the oldest waiting sender)
    // or, at capacity 0, from the oldest waiting sender. The lock is dropped before a sender is
    // released. False if there is none.
    bool take(std::optional<T>& result, std::unique_lock<std::mutex>& guard) {
        detail::sync_waiter* sender = m_senders.empty() ? nullptr : &m_senders.pop_front();
        if (m_size != 0) {
            std::optional<T>& front = m_ring[m_head];
            result.emplace(std::move(*front));
            front.reset();
            m_head = m_head + 1 == m_ring.size() ? 0 : m_head + 1;
            --m_size;
            if (sender != nullptr)
                push(std::move(*static_cast<T*>(sender->payload)));
        } else if (sender != nullptr) {
            result.emplace(std::move(*static_cast<T*>(sender->payload)));
        } else {
            return false;
        }
        if (sender != nullptr) {
            sender->outcome = detail::wait_outcome::granted;
            guard.unlock();
            detail::release(*sender);
        }
        return true;
    }

    // Under the lock, with m_size < capacity.
    void push(T&& value) noexcept {
        const std::size_t slot =
            m_head + m_size < m_ring.size() ? m_head + m_size : m_head + m_size - m_ring.size();
        m_ring[slot].emplace(std::move(value));
        ++m_size;
    }

    mutable std::mutex m_lock;            // guards everything below
    std::vector<std::optional<T>> m_ring; // the buffer: m_size values from m_head on, cyclically
    std::size_t m_head = 0;
    std::size_t m_size = 0;
    detail::waiter_queue m_senders;   // each payload: the T to send
    detail::waiter_queue m_receivers; // each payload: the std::optional<T> to fill
    bool m_closed = false;
};

} // namespace fj
