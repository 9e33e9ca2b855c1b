// The completion word shared by a task and the one consumer that waits for it (a future, a join,
// a continuation, or a when_all / when_any).
//
// m_word holds three flags and, in the remaining bits, the address of at most one registered
// waiter:
//   k_done       set once by the producer (the thread that ran the task), after the result is
//                stored;
//   k_detached   set once by the consumer when it gives up its interest (a future dropped unread);
//   k_cancelled  set by the consumer's cancel(); the producer, if it sees it when it claims the
//                task, skips it and stores fj::task_cancelled instead;
//   k_taken      set by a consumer that runs the still-queued task itself (try_take(): a get()
//                outside every pool); the producer, if it sees it when it claims the task,
//                leaves the callable and the result alone and only finishes;
//   waiter*      a record on the waiting side (a stack record, a continuation), woken by the
//                producer.
// Whoever sets the second of {k_done, k_detached} frees the shared state. After finish() the
// producer touches neither the state nor the waiter record again, except to call wake() on the
// record, and the waiter does not leave until that call has signalled it (completion is the last
// touch: docs/design/completion.md).
//
// A start_flag is the producer's own byte: not started, claiming, running or skipped. It lives
// outside the completion (future_state puts it in the result slot's tail padding, so a task with
// a small callable still fits a 64-byte block). The race between try_start() and cancel() is a
// Dekker pair over the word and the byte (docs/design/cancel.md): each side
// stores its flag, then reads the other's. Starting happens on every task and cancelling almost
// never, so the StoreLoad barrier the pair needs is asymmetric (asymmetric_barrier.hpp): the
// producer's side is a compiler barrier, cancel() pays a membarrier(2). Without it (TSan builds,
// old kernels) both sides use seq_cst, which is the previous cost: one locked instruction.
//
// Atomics: std_atomics in the runtime (completion and start_flag are basic_completion<> and
// basic_start_flag<>); the model test passes Relacy's (atomics.hpp).
#pragma once

#include "atomics.hpp"

#include <atomic>
#include <cassert>
#include <cstdint>

namespace fj::detail {

// Whether the producer has claimed the task (see try_start()); written by the producer only.
template <class Atomics = std_atomics>
class basic_start_flag {
    template <class>
    friend class basic_completion;
    static constexpr std::uint8_t k_not_started = 0;
    static constexpr std::uint8_t k_claiming = 1;
    static constexpr std::uint8_t k_running = 2;
    static constexpr std::uint8_t k_skipped = 3;
    typename Atomics::template atomic<std::uint8_t> m_state{k_not_started};
};
using start_flag = basic_start_flag<>;

// A registered waiter. wake() runs on the producer's thread and is the last access to the record.
struct alignas(16) waiter { // 16: four flag bits below the address
    void (*m_wake)(waiter*) noexcept = nullptr;
};

template <class Atomics = std_atomics>
class basic_completion {
    using start_flag = basic_start_flag<Atomics>;

public:
    // acquire: pairs with the release half of finish(); after true, the result may be read.
    bool is_done() const noexcept { return (m_word.load(std::memory_order_acquire) & k_done) != 0; }

    // Consumer: done, or cancelled before it started (no result will be read: nothing to order).
    bool is_ready() const noexcept {
        return (m_word.load(std::memory_order_acquire) & (k_done | k_cancelled)) != 0;
    }

    // Consumer, after is_ready(): true if cancel() won and the task has not finished since.
    bool is_cancelled() const noexcept {
        return (m_word.load(std::memory_order_acquire) & (k_done | k_cancelled)) == k_cancelled;
    }

    // Producer, before running the task: claims it unless the consumer cancelled it first.
    // Stores "claiming", then reads k_cancelled, then publishes its decision in `start`; cancel()
    // does the mirror image, so at least one side sees the other (Dekker), and a cancel() that sees
    // "claiming" waits for the decision. relaxed on the asymmetric path: the order is the
    // compiler's (light_barrier) and the kernel's (cancel()'s heavy_barrier); no data is published
    // through these flags (the result goes through finish()).
    [[nodiscard]] bool try_start(start_flag& start) noexcept {
        std::uintptr_t word;
        if (Atomics::asymmetric_barrier_registered()) [[likely]] {
            start.m_state.store(start_flag::k_claiming, std::memory_order_relaxed);
            Atomics::light_barrier();
            word = m_word.load(std::memory_order_relaxed);
        } else {
            // seq_cst store then seq_cst load, mirrored in cancel(): the store-buffering
            // outcome (neither sees the other) is forbidden.
            start.m_state.store(start_flag::k_claiming, std::memory_order_seq_cst);
            word = m_word.load(std::memory_order_seq_cst);
        }
        const bool run = (word & (k_cancelled | k_taken)) == 0;
        start.m_state.store(run ? start_flag::k_running : start_flag::k_skipped,
                            std::memory_order_relaxed);
        return run;
    }

    // Consumer: cancels the task if it has not started (nor finished). See try_start(). Costs a
    // membarrier(2) when it gets as far as the race (a few µs): cancelling is rare.
    [[nodiscard]] bool cancel(start_flag& start) noexcept {
        if (start.m_state.load(std::memory_order_relaxed) != start_flag::k_not_started)
            return false; // claimed before our request existed: it will run
        return claim_before_start(start, k_cancelled);
    }

    // Consumer: whether try_take() could win now (a hint: relaxed loads).
    bool may_take(const start_flag& start) const noexcept {
        return start.m_state.load(std::memory_order_relaxed) == start_flag::k_not_started &&
               (m_word.load(std::memory_order_relaxed) & (k_done | k_cancelled | k_taken)) == 0;
    }

    // Consumer: takes the task over to run it itself, if it has not started (nor finished, nor
    // been cancelled or taken). The same race as cancel(), won the same way: after true, the
    // producer that takes the task from its queue skips it (try_start() returns false and
    // is_taken() true) and only finishes, and the caller runs the callable, stores the result,
    // and releases the state as a consumer does (detach(), unless finish() has come first).
    [[nodiscard]] bool try_take(start_flag& start) noexcept {
        if (start.m_state.load(std::memory_order_relaxed) != start_flag::k_not_started)
            return false; // claimed already: it runs (or ran) where it was queued
        return claim_before_start(start, k_taken);
    }

    // Producer, after try_start() returned false: true if a consumer took the task (try_take()),
    // false if it was cancelled. relaxed: try_start() read the bit in this word already, and
    // neither flag is cleared once a claim has won.
    bool is_taken() const noexcept {
        return (m_word.load(std::memory_order_relaxed) & k_taken) != 0;
    }

    // Producer, once, after storing the result. Returns true if the consumer had detached, in which
    // case the caller frees the state (nobody else will).
    [[nodiscard]] bool finish() noexcept {
        // An exchange, not fetch_or: x86 has no fetch_or that returns the old value, so fetch_or
        // compiles to a CAS loop. Overwriting the waiter bits is fine: after k_done nobody reads
        // them (register/deregister/detach all look at k_done first).
        // acq_rel: release publishes the result to the consumer's acquire in is_done(); acquire
        // orders a detached consumer's last accesses before the caller frees the state.
        const std::uintptr_t old = m_word.exchange(k_done, std::memory_order_acq_rel);
        if (waiter* w = waiter_of(old))
            w->m_wake(w);
        return (old & k_detached) != 0;
    }

    // Consumer, once, instead of waiting (with no waiter registered: a timed-out waiter has
    // deregistered). Returns true if the producer already finished, in which case the caller
    // frees the state. fetch_or, not an exchange: k_cancelled must survive, or a cancelled task
    // whose future is then dropped would run after all. acq_rel: pairs with finish().
    [[nodiscard]] bool detach() noexcept {
        return (m_word.fetch_or(k_detached, std::memory_order_acq_rel) & k_done) != 0;
    }

    // Consumer. Registers `w` to be woken by finish(). False if already done or cancelled (w will
    // not be woken).
    bool try_register(waiter* w) noexcept {
        // acquire: if this already sees k_done, the caller reads the result next (pairs with the
        // release half of finish()); relaxed, that read of the result would be a data race.
        std::uintptr_t old = m_word.load(std::memory_order_acquire);
        do {
            if (old & (k_done | k_cancelled))
                return false;
            assert(waiter_of(old) == nullptr && "a completion has at most one waiter");
            // release: the record's fields are visible to the producer that reads it in finish().
            // acquire on failure: a k_done we then observe publishes the result.
        } while (!m_word.compare_exchange_weak(old, old | reinterpret_cast<std::uintptr_t>(w),
                                               std::memory_order_acq_rel,
                                               std::memory_order_acquire));
        return true;
    }

    // Consumer, after a timeout. True if `w` was removed before finish() saw it; false if finish()
    // has run or is running, in which case w->wake() is (about to be) called and the caller must
    // wait for it before reusing the record.
    bool try_deregister(waiter* w) noexcept {
        std::uintptr_t old = m_word.load(std::memory_order_acquire);
        do {
            if (old & k_done)
                return false;
            assert(waiter_of(old) == w);
            (void)w;
        } while (!m_word.compare_exchange_weak(old, old & k_flags, std::memory_order_acq_rel,
                                               std::memory_order_acquire));
        return true;
    }

private:
    static constexpr std::uintptr_t k_done = 1;
    static constexpr std::uintptr_t k_detached = 2;
    static constexpr std::uintptr_t k_taken = 4;
    static constexpr std::uintptr_t k_cancelled = 8;

    // cancel() and try_take(): the consumer's half of the Dekker pair with try_start(). Sets
    // `flag` (k_cancelled or k_taken) unless the task is done or a claim was made already, then
    // reads the producer's start flag; true if the producer has not claimed the task first.
    bool claim_before_start(start_flag& start, std::uintptr_t flag) noexcept {
        std::uintptr_t old = m_word.load(std::memory_order_relaxed);
        do {
            if (old & (k_done | k_cancelled | k_taken))
                return false;
            // seq_cst: our Dekker half's store (on x86 the CAS is also the full barrier).
        } while (!m_word.compare_exchange_weak(old, old | flag, std::memory_order_seq_cst,
                                               std::memory_order_relaxed));
        // Asymmetric producers only order their store before their load by the compiler: make
        // every CPU running one of our threads execute a full barrier. After it, either the
        // producer's "claiming" is visible here, or its later load of m_word sees our flag.
        // Checked per call (not a cached flag): a producer that read the flag as set implies the
        // registration is complete, and then this call returns true too.
        if (Atomics::asymmetric_barrier_available())
            Atomics::heavy_barrier();
        for (unsigned spins = 0;; ++spins) {
            switch (start.m_state.load(std::memory_order_seq_cst)) {
            case start_flag::k_not_started: // the producer will see our flag when it claims
            case start_flag::k_skipped:
                return true;
            case start_flag::k_running: // it claimed before seeing our flag: withdraw the request
                m_word.fetch_and(~flag, std::memory_order_relaxed);
                return false;
            default: // claiming: its decision is a load and a store away
                if (spins < 64)
                    Atomics::cpu_relax();
                else
                    Atomics::yield_thread(); // unless it was preempted in between
            }
        }
    }

    static constexpr std::uintptr_t k_flags = 15; // waiter records are 16-aligned

    static waiter* waiter_of(std::uintptr_t word) noexcept {
        return reinterpret_cast<waiter*>(word & ~k_flags);
    }

    typename Atomics::template atomic<std::uintptr_t> m_word{0};
};
using completion = basic_completion<>;

} // namespace fj::detail
