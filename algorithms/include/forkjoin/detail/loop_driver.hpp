// How the loop algorithms cut a range of offsets [0, n) into chunks and spread them over the
// workers, always by recursive fork/join (fj::join), never by pre-chopping into P pieces, so that
// uneven bodies balance by stealing.
//
// - Fixed grain (fj::grain, a blocked_range's grain, and every parallel_reduce): halve while a
//   piece is larger than the grain. The tree depends on n and the grain only.
// - Adaptive (parallel_for's default): lazy binary splitting (Tzannes, Caragea, Barua and
//   Vishkin, PPoPP 2010). A worker runs its piece a chunk at a time and, between chunks, looks at
//   its own deque: empty means thieves took everything this worker had exposed (or nobody exposed
//   anything yet), so it splits off the second half of what is left for them; not empty means the
//   pool is busy, so it goes on serially. With no thief around this costs about log2(n) splits;
//   with thieves, every worker keeps a piece exposed. Chunks adapt to take 8-64 µs each, so the
//   checks and clock reads stay far below 1% of the time for any body cost, and the worst end of
//   loop imbalance is one chunk.
//
// The driver is the same code for every loop body: it reaches the body's leaf through leaf_ref
// (a pointer and a function), so a translation unit compiles it once, and what each body adds is
// its leaf and the function that calls it. That is one indirect call per chunk, next to a chunk's
// 8-64 µs (or a fixed grain's worth of iterations and a join).
#pragma once

#include "affinity_run.hpp"
#include "loop_failure.hpp"
#include "loop_options.hpp"
#include "offset_partition.hpp"
#include "tracked_run.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/extension.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

// A reference to a leaf: callable as leaf(lo, hi, failure) for offsets [lo, hi); the leaf
// catches its own exceptions and records them in `failure` (so chunks never throw through the
// joins). The leaf must outlive the reference.
class leaf_ref {
public:
    // Not for a leaf_ref itself: copying one copies the reference, it does not refer to the copy.
    template <class Leaf>
    requires(!std::is_same_v<std::remove_cv_t<Leaf>, leaf_ref>) explicit leaf_ref(
        Leaf& leaf) noexcept
        : m_leaf(&leaf), m_call(&call<Leaf>) {}

    void operator()(std::size_t lo, std::size_t hi, loop_failure& failure) const {
        m_call(m_leaf, lo, hi, failure);
    }

private:
    template <class Leaf>
    static void call(void* leaf, std::size_t lo, std::size_t hi, loop_failure& failure) {
        (*static_cast<Leaf*>(leaf))(lo, hi, failure);
    }

    void* m_leaf;
    void (*m_call)(void*, std::size_t, std::size_t, loop_failure&);
};

class loop_driver {
public:
    loop_driver(fj::scheduler& sched, leaf_ref leaf, loop_failure& failure) noexcept
        : m_sched(sched), m_leaf(leaf), m_failure(failure) {}

    void run_fixed(std::size_t lo, std::size_t hi, std::size_t grain) {
        if (lo >= m_failure.limit())
            return;
        if (hi - lo <= grain) {
            run_leaf(lo, hi);
            return;
        }
        const std::size_t mid = lo + (hi - lo) / 2;
        m_sched.join([&] { run_fixed(lo, mid, grain); }, [&] { run_fixed(mid, hi, grain); });
    }

    // Returns the chunk size it ended with: a right half that starts after its left half has
    // finished (on the same worker, not stolen) goes on from the size the left half learnt
    // instead of starting again from one iteration. relaxed: a hint; a thief that starts before
    // the left half ends reads nothing and starts from the size at the split.
    std::size_t run_adaptive(std::size_t lo, std::size_t hi, std::size_t chunk) {
        auto chunk_start = clock::now();
        while (hi - lo > 1 && lo < m_failure.limit()) {
            if (ext::own_queue_empty()) {
                const std::size_t mid = lo + (hi - lo) / 2;
                std::atomic<std::size_t> learnt{0};
                std::size_t last = chunk;
                m_sched.join(
                    [&] { learnt.store(run_adaptive(lo, mid, chunk), std::memory_order_relaxed); },
                    [&] {
                        const std::size_t left = learnt.load(std::memory_order_relaxed);
                        last = run_adaptive(mid, hi, left != 0 ? left : chunk);
                    });
                return last;
            }
            const std::size_t end = lo + (chunk < hi - lo ? chunk : hi - lo);
            run_leaf(lo, end);
            lo = end;
            const auto now = clock::now();
            chunk = next_chunk(chunk, now - chunk_start);
            chunk_start = now;
        }
        run_leaf(lo, hi);
        return chunk;
    }

    // The first chunk size for an adaptive run: one iteration, then doubling while chunks are fast.
    static constexpr std::size_t k_first_chunk = 1;

private:
    using clock = std::chrono::steady_clock;

    static std::size_t next_chunk(std::size_t chunk, clock::duration took) noexcept {
        using namespace std::chrono_literals;
        if (took < 8us && chunk < (std::size_t{1} << 40))
            return chunk * 2;
        if (took > 64us && chunk > 1)
            return chunk / 2;
        return chunk;
    }

    void run_leaf(std::size_t lo, std::size_t hi) {
        const std::size_t limit = m_failure.limit();
        if (limit < hi)
            hi = limit;
        if (lo < hi)
            m_leaf(lo, hi, m_failure);
    }

    fj::scheduler& m_sched;
    leaf_ref m_leaf;
    loop_failure& m_failure;
};

// Runs leaf over [0, n) on sched as the options' partitioner asks: adaptively (automatic, no
// grain), halving down to a fixed grain (automatic with a grain, simple, per worker), or in
// affinity pieces. Returns once every started chunk has finished (bodies may reference the
// caller's stack), then rethrows the lowest-offset failure, or throws fj::operation_cancelled
// naming `who` if the stop token was requested meanwhile (its callback stops every chunk that
// has not started).
inline void run_loop_of(const char* who, fj::scheduler& sched, std::size_t n,
                        const loop_options& options, leaf_ref leaf) {
    loop_failure failure;
    loop_driver driver(sched, leaf, failure);
    auto work = [&] {
        if (options.kind == partition::affinity) {
            const offset_pieces pieces(n, options.grain, sched.worker_count());
            auto run_piece = [&](std::size_t i) {
                driver.run_fixed(pieces.begin_of(i), pieces.begin_of(i + 1), n);
            };
            run_with_affinity(sched, *options.affinity, pieces.count(), run_piece);
            return true;
        }
        const std::size_t grain =
            fixed_loop_grain(options.kind, n, options.grain, sched.worker_count());
        if (grain == 0)
            driver.run_adaptive(0, n, loop_driver::k_first_chunk);
        else
            driver.run_fixed(0, n, grain);
        return true;
    };
    run_tracked(who, sched, options.stop, failure, n == 0, false, work);
}

// The per-body part: Leaf as above.
template <class Leaf>
void run_loop(const char* who, fj::scheduler& sched, std::size_t n, const loop_options& options,
              Leaf& leaf) {
    run_loop_of(who, sched, n, options, leaf_ref(leaf));
}

} // namespace fj::detail
