// How a partitioner (partitioner.hpp) cuts a loop over offsets [0, n): the index loops, the
// blocked_range forms of parallel_for and the functional parallel_reduce, which can cut at any
// offset (a custom range can only be halved: range_driver.hpp).
#pragma once

#include "affinity_run.hpp"
#include "loop_options.hpp"

#include <cstddef>

namespace fj::detail {

// The fixed grain a partitioner asks of an offset loop of n iterations on `workers` workers
// (partitioner.hpp's rule), or 0 for adaptive splitting. `grain` is the caller's (0: none).
inline std::size_t fixed_loop_grain(partition kind, std::size_t n, std::size_t grain,
                                    std::size_t workers) noexcept {
    switch (kind) {
    case partition::simple:
        return grain == 0 ? 1 : grain;
    case partition::per_worker: { // halving until a piece is at most n / workers, never below grain
        const std::size_t p = workers == 0 ? 1 : workers;
        const std::size_t share = n / p + (n % p != 0);
        return share > grain ? share : grain;
    }
    default:
        return grain;
    }
}

// The pieces an affinity_partitioner cuts [0, n) into: about four per worker, none below the
// grain (partitioner.hpp). Piece i is [piece_begin(i), piece_begin(i + 1)).
class offset_pieces {
public:
    offset_pieces(std::size_t n, std::size_t grain, std::size_t workers) noexcept : m_n(n) {
        const std::size_t g = grain == 0 ? 1 : grain;
        const std::size_t most = n / g + (n % g != 0);
        const std::size_t target = affinity_piece_target(workers);
        m_count = most < target ? most : target;
    }
    std::size_t count() const noexcept { return m_count; }
    // floor(n * i / count) without overflowing for n near 2^64 (i <= count, a few per worker).
    std::size_t begin_of(std::size_t i) const noexcept {
        return m_n / m_count * i + m_n % m_count * i / m_count;
    }

private:
    std::size_t m_n;
    std::size_t m_count = 0;
};

} // namespace fj::detail
