// The workloads of confined_bench (docs/performance.md#confined): the same three programs on every
// runtime, each with its serial reference and a check that aborts the run on a wrong answer.
//
//   seismic    `frames` short loops one after the other, each over `rows` rows of a few
//              microseconds: row r of frame f mixes rows r-1, r, r+1 of frame f-1 (a 1-D stencil),
//              so every frame waits for the one before. Many short parallel loops: the shape where
//              a pool that spins or wakes too eagerly loses most when it does not own the cores.
//   fib_join   fib(n) with a join at every node (no cutoff): the cheapest forks there are.
//   fib_future fib(n) with a fork and a future's get() at every node (no cutoff).
//
// A runtime implements confined_runner for a pool of a given worker count; the driver times each
// call (only the parallel part: pools and arenas are made before).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fj_perf::confined {

struct seismic_size {
    int frames = 150;
    int rows = 400;
    int row_work = 3000; // dependent multiply-adds per row: a few microseconds
};

// One row of one frame from the three rows above it. Opaque enough that the compiler keeps the
// whole chain: each step depends on the last.
inline std::uint64_t seismic_row(std::uint64_t left, std::uint64_t mid, std::uint64_t right,
                                 int work) {
    std::uint64_t x = left ^ (mid << 1) ^ (right >> 1) ^ 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < work; ++i)
        x = x * 6364136223846793005ull + (x >> 29) + 1442695040888963407ull;
    return x;
}

// Frame f's row r into `next`, from `prev` (rows beyond the edges read as 0).
inline void seismic_step(const std::vector<std::uint64_t>& prev, std::vector<std::uint64_t>& next,
                         std::size_t r, int work) {
    const std::size_t n = prev.size();
    next[r] = seismic_row(r > 0 ? prev[r - 1] : 0, prev[r], r + 1 < n ? prev[r + 1] : 0, work);
}

inline std::vector<std::uint64_t> seismic_initial(int rows) {
    std::vector<std::uint64_t> v(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < v.size(); ++r)
        v[r] = r * 0x2545f4914f6cdd1dull + 1;
    return v;
}

inline std::uint64_t seismic_checksum(const std::vector<std::uint64_t>& v) {
    std::uint64_t sum = 0;
    for (std::uint64_t x : v)
        sum = sum * 31 + x;
    return sum;
}

// The serial reference: the checksum of the last frame.
inline std::uint64_t seismic_serial(const seismic_size& s) {
    std::vector<std::uint64_t> prev = seismic_initial(s.rows), next(prev.size());
    for (int f = 0; f < s.frames; ++f) {
        for (std::size_t r = 0; r < prev.size(); ++r)
            seismic_step(prev, next, r, s.row_work);
        prev.swap(next);
    }
    return seismic_checksum(prev);
}

inline long fib_serial(int n) {
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

class confined_runner {
public:
    virtual ~confined_runner() = default;
    // Each returns the workload's answer: the checksum, fib(n), fib(n).
    virtual std::uint64_t seismic(const seismic_size& s) = 0;
    virtual long fib_join(int n) = 0;
    virtual long fib_future(int n) = 0;
    // Called before each timed call, untimed (oneTBB sets its thread limit here).
    virtual void before_run() {}
    virtual void after_run() {}
};

struct confined_competitor {
    std::string name;
    std::unique_ptr<confined_runner> (*make)(int workers);
};

inline std::vector<confined_competitor>& confined_competitors() {
    static std::vector<confined_competitor> table;
    return table;
}

struct confined_registrar {
    explicit confined_registrar(confined_competitor c) {
        confined_competitors().push_back(std::move(c));
    }
};

} // namespace fj_perf::confined
