// The slots a pool keeps for threads outside it that run their own parallel calls
// (docs/design/callers.md): at most a fixed number, each made the first time no made one is free
// and kept for the pool's life (its worker sits in the pool's worker set, where thieves see its
// deque). A thread holds a slot for one call.
//
// Invariant: a slot is held by at most one thread at a time: `busy` is set by the exchange that
// claims it and cleared by the release that ends the call. The release/acquire pair also hands the
// slot's owner-only state (the deque's owner end, its block cache, its counters) from one holder
// to the next. held() counts the slots claimed and not yet released.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include <forkjoin/detail/worker.hpp>

namespace fj::detail {

class caller_slots {
public:
    static constexpr std::size_t k_none = static_cast<std::size_t>(-1);

    explicit caller_slots(std::size_t capacity)
        : m_entries(std::make_unique<entry[]>(capacity)), m_capacity(capacity) {}

    std::size_t capacity() const noexcept { return m_capacity; }

    // Claims a made slot that no thread holds, trying `hint` (the one this thread held last)
    // first; its number, or k_none if every made slot is held.
    std::size_t claim_made(std::size_t hint) noexcept {
        // acquire: pairs with claim_new()'s release; the entries below the count are complete.
        const std::size_t made = m_made.load(std::memory_order_acquire);
        if (hint < made && try_claim(hint))
            return claimed(hint);
        for (std::size_t k = 0; k < made; ++k)
            if (try_claim(k))
                return claimed(k);
        return k_none;
    }

    // Makes a new slot with make() (its worker, already in the pool's worker set), held by the
    // calling thread; its number, or k_none at capacity. Passes on what make() throws.
    template <class Make>
    std::size_t claim_new(Make&& make) {
        std::lock_guard lock(m_grow);
        // relaxed: only claim_new() writes the count, under the lock.
        const std::size_t k = m_made.load(std::memory_order_relaxed);
        if (k == m_capacity)
            return k_none;
        m_entries[k].slot = &make();
        // relaxed: not yet visible to anyone (the count below publishes it), so ours alone.
        m_entries[k].busy.store(true, std::memory_order_relaxed);
        // release: pairs with claim_made()'s acquire.
        m_made.store(k + 1, std::memory_order_release);
        return claimed(k);
    }

    // The slots made so far (relaxed: a hint for the sleepers' timeout, worker_loop.cpp).
    std::size_t made() const noexcept { return m_made.load(std::memory_order_relaxed); }

    // The callers inside their calls now, for the crowding rules (pool.hpp,
    // threads_running_tasks). relaxed: a hint, as the CPU count is; a stale value costs a wake-up
    // or a spin, never a task (a crowded pool's sleepers sleep with the backstop timeout).
    std::size_t held() const noexcept { return m_held.load(std::memory_order_relaxed); }

    // Precondition: slot k was claimed by the calling thread.
    worker& slot(std::size_t k) const noexcept { return *m_entries[k].slot; }

    void release(std::size_t k) noexcept {
        // release: pairs with the next holder's acquire exchange (try_claim): everything this
        // holder did with the slot happens before the next one uses it.
        m_entries[k].busy.store(false, std::memory_order_release);
        m_held.fetch_sub(1, std::memory_order_relaxed); // a hint: held()
    }

private:
    // One line each: callers on different slots never share one.
    struct alignas(64) entry {
        worker* slot = nullptr; // written once, before the count that publishes it
        std::atomic<bool> busy{false};
    };

    std::size_t claimed(std::size_t k) noexcept {
        m_held.fetch_add(1, std::memory_order_relaxed); // a hint: held()
        return k;
    }

    bool try_claim(std::size_t k) noexcept {
        std::atomic<bool>& busy = m_entries[k].busy;
        // A relaxed look first (no line taken for a held slot); acquire on the exchange pairs
        // with release().
        return !busy.load(std::memory_order_relaxed) &&
               !busy.exchange(true, std::memory_order_acquire);
    }

    std::unique_ptr<entry[]> m_entries;
    const std::size_t m_capacity;
    std::atomic<std::size_t> m_made{0};
    std::atomic<std::size_t> m_held{0};
    std::mutex m_grow; // claim_new() only: making a slot is rare
};

} // namespace fj::detail
