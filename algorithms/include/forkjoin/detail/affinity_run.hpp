// How an fj::affinity_partitioner sends each piece back to the worker that ran it last time.
//
// The loop is cut into a fixed list of pieces (about four per worker) before anything runs, so a
// piece has the same number on every call over the same range. One claimer task per worker is
// forked (a join tree, so idle workers steal them). A claimer on worker w:
//   1. runs the pieces that w ran last time, each claimed by an exchange on its flag;
//   2. then claims whatever is left, starting at its own share of the list.
// Every piece is run exactly once: the exchange on its flag hands it to one claimer. Nothing
// waits for a particular worker: a worker that is busy elsewhere has its pieces taken in step 2.
// The claimer records w for each piece it ran, in a list written only by the claimers (each
// piece by one) and read only after the join; it becomes the record the next call reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include <forkjoin/async.hpp>
#include <forkjoin/partitioner.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj::detail {

struct affinity_record_access {
    // The record for a call of `pieces` pieces on `workers` workers; empty (no worker for any
    // piece) when the last call had another shape.
    static const std::vector<std::size_t>& previous(affinity_partitioner& ap, std::size_t pieces,
                                                    std::size_t workers) {
        if (ap.m_previous.size() != pieces || ap.m_workers != workers) {
            ap.m_previous.assign(pieces, not_a_worker);
            ap.m_workers = workers;
        }
        return ap.m_previous;
    }
    static void keep(affinity_partitioner& ap, std::vector<std::size_t>&& ran_on) {
        ap.m_previous = std::move(ran_on);
    }
};

// About four pieces per worker, as far as the loop divides: enough for step 2 to balance.
inline std::size_t affinity_piece_target(std::size_t workers) noexcept {
    return 4 * (workers == 0 ? 1 : workers);
}

// Runs run_piece(i) for every i in [0, pieces), each exactly once, on the workers that ran them
// under `ap` last time where they are free. run_piece records its own failures and skips a piece
// that a failure or a stop has cancelled.
template <class RunPiece>
void run_with_affinity(fj::scheduler& sched, affinity_partitioner& ap, std::size_t pieces,
                       RunPiece& run_piece) {
    const std::size_t workers = sched.worker_count();
    const std::vector<std::size_t>& previous =
        affinity_record_access::previous(ap, pieces, workers);
    std::vector<std::size_t> ran_on(pieces, not_a_worker);
    const std::unique_ptr<std::atomic<bool>[]> taken(new std::atomic<bool>[pieces]);
    for (std::size_t i = 0; i < pieces; ++i)
        taken[i].store(false, std::memory_order_relaxed);

    const auto run_one = [&](std::size_t i, std::size_t w) {
        // acq_rel is not needed: the join orders every claimer's writes before the caller's
        // reads; the exchange only has to pick one claimer, which any RMW does.
        if (taken[i].exchange(true, std::memory_order_relaxed))
            return;
        ran_on[i] = w;
        run_piece(i);
    };
    const auto claimer = [&](std::size_t c) {
        const std::size_t w = current_worker_index();
        if (w != not_a_worker)
            for (std::size_t i = 0; i < pieces; ++i)
                if (previous[i] == w)
                    run_one(i, w);
        const std::size_t start = pieces * c / workers;
        for (std::size_t k = 0; k < pieces; ++k)
            run_one((start + k) % pieces, w);
    };
    const auto claimers = [&](const auto& self, std::size_t lo, std::size_t hi) -> void {
        if (hi - lo == 1) {
            claimer(lo);
            return;
        }
        const std::size_t mid = lo + (hi - lo) / 2;
        sched.join([&] { self(self, lo, mid); }, [&] { self(self, mid, hi); });
    };
    claimers(claimers, 0, workers == 0 ? 1 : workers);
    affinity_record_access::keep(ap, std::move(ran_on));
}

} // namespace fj::detail
