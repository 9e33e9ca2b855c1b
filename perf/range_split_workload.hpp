// Two workloads that show how far a runtime splits a loop by default and what an affinity
// partitioner keeps across calls (docs/performance-algorithms.md#partitioners), shared by
// forkjoin and oneTBB.
//
// overlay: oneTBB's polygon-overlay shape. Two "maps", lists of axis-aligned rectangles with
// integer corners (fixed seeds); a custom range (not a blocked_range) over the first list that
// halves it while it holds more than k_overlay_leaf rectangles, and an imperative reduction body
// that intersects every rectangle of its piece with every rectangle of the second list and adds
// up the intersection areas. A piece costs |piece| x |second list|. Areas are integers, so every
// runtime's sum equals the serial one exactly, whatever the pieces.
//
// stencil: the shape of oneTBB's seismic example. A 1-D wave equation on a field of floats kept
// in three arrays (the two last frames and the next), each frame one parallel_for over the cells,
// every cell written from its neighbours in the frames before. The same frames touch the same
// cells, so a runtime that gives each worker the cells it had last frame finds them in its cache.
// Each cell's value is one fixed expression of floats, so every runtime's field equals the serial
// one bit for bit.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fj_perf::range_split {

// --- overlay ------------------------------------------------------------------------------------

struct rect {
    std::int32_t x0, y0, x1, y1; // [x0, x1) x [y0, y1)
};

// `count` rectangles on a 10000 x 10000 map, 20 to 1000 wide and high, from `seed`.
inline std::vector<rect> make_map(std::size_t count, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<std::int32_t> corner(0, 9000), side(20, 1000);
    std::vector<rect> map(count);
    for (auto& r : map) {
        r.x0 = corner(gen);
        r.y0 = corner(gen);
        r.x1 = r.x0 + side(gen);
        r.y1 = r.y0 + side(gen);
    }
    return map;
}

// A piece is not split below this many rectangles of the first map.
inline constexpr std::size_t k_overlay_leaf = 8;

// The range: [begin, end) of the first map, with the second map along. Split: the runtime's tag
// (fj::split, tbb::split).
template <class Split>
class overlay_range {
public:
    overlay_range(const std::vector<rect>& first, const std::vector<rect>& second)
        : m_first(first.data()), m_second(&second), m_begin(0), m_end(first.size()) {}
    overlay_range(const overlay_range&) = default;
    overlay_range(overlay_range& r, Split)
        : m_first(r.m_first), m_second(r.m_second), m_begin(r.m_begin + (r.size() / 2)),
          m_end(r.m_end) {
        r.m_end = m_begin;
    }

    bool empty() const { return m_begin == m_end; }
    bool is_divisible() const { return size() > k_overlay_leaf; }
    std::size_t size() const { return m_end - m_begin; }
    const rect* begin() const { return m_first + m_begin; }
    const rect* end() const { return m_first + m_end; }
    const std::vector<rect>& second() const { return *m_second; }

private:
    const rect* m_first;
    const std::vector<rect>* m_second;
    std::size_t m_begin;
    std::size_t m_end;
};

// The area of every pair's intersection in one piece. Not inlined: every runtime's file then runs
// the same machine code, whatever the code around the call.
template <class Split>
[[gnu::noinline]] std::int64_t overlay_area(const overlay_range<Split>& r) {
    std::int64_t area = 0;
    const rect* const second = r.second().data();
    const std::size_t count = r.second().size();
    for (const rect& a : r) {
        for (std::size_t j = 0; j < count; ++j) {
            const rect& b = second[j];
            const std::int64_t w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
            const std::int64_t h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
            area += w > 0 && h > 0 ? w * h : 0;
        }
    }
    return area;
}

// The imperative reduction body; also counts the pieces it was given and the bodies made.
template <class Split>
class overlay_body {
public:
    overlay_body() = default;
    overlay_body(overlay_body&, Split) {}

    void operator()(const overlay_range<Split>& r) {
        m_area += overlay_area(r);
        ++m_pieces;
    }
    void join(overlay_body& other) {
        m_area += other.m_area;
        m_pieces += other.m_pieces;
        m_bodies += other.m_bodies;
    }

    std::int64_t area() const { return m_area; }
    long pieces() const { return m_pieces; }
    long bodies() const { return m_bodies; }

private:
    std::int64_t m_area = 0;
    long m_pieces = 0;
    long m_bodies = 1;
};

struct overlay_input {
    std::vector<rect> first;
    std::vector<rect> second;
};

// One overlay: the total area, the pieces the runtime handed to bodies, the bodies it made.
struct overlay_result {
    std::int64_t area = 0;
    long pieces = 0;
    long bodies = 0;
};

template <class Split>
overlay_result result_of(const overlay_body<Split>& b) {
    return {b.area(), b.pieces(), b.bodies()};
}

using overlay_runner = std::function<overlay_result(const overlay_input&)>;

// A runtime's entry: make(workers) returns a runner whose pool lives as long as it does.
struct overlay_competitor {
    std::string name;
    std::function<overlay_runner(int workers)> make;
};

inline std::vector<overlay_competitor>& overlay_competitors() {
    static std::vector<overlay_competitor> all;
    return all;
}

struct overlay_registrar {
    explicit overlay_registrar(overlay_competitor c) {
        overlay_competitors().push_back(std::move(c));
    }
};

// --- stencil ------------------------------------------------------------------------------------

// The field: frames t - 1 (previous), t (current) and t + 1 (next), rotated after each frame.
struct stencil_field {
    std::vector<float> previous, current, next;
    // When set (an untimed run), every body call adds one: the pieces a runtime cut frames into.
    std::atomic<long>* pieces = nullptr;

    // Two waves over the whole field, the same for every runtime: no cell starts at 0, so the
    // damped values stay far above the denormals (which would slow some cells a hundredfold).
    explicit stencil_field(std::size_t cells) : previous(cells), current(cells), next(cells) {
        for (std::size_t i = 0; i < cells; ++i) {
            const double x = static_cast<double>(i);
            current[i] = static_cast<float>(std::sin(x * 0.00628) + 0.5 * std::sin(x * 0.17) + 2);
            previous[i] = 0.99f * current[i];
        }
    }
    void rotate() {
        std::swap(previous, current);
        std::swap(current, next);
    }
    void count_piece() const {
        if (pieces != nullptr)
            pieces->fetch_add(1, std::memory_order_relaxed);
    }
};

// Frame t + 1 at cells [lo, hi) from frames t and t - 1; the two end cells stay 0 (fixed ends).
// Not inlined, as overlay_area.
[[gnu::noinline]] inline void stencil_cells(const float* previous, const float* current,
                                            float* next, std::size_t cells, std::size_t lo,
                                            std::size_t hi) {
    constexpr float c = 0.25f; // (wave speed x time step / cell width)^2: stable below 1
    constexpr float damp = 0.999f;
    const std::size_t first = std::max<std::size_t>(lo, 1);
    const std::size_t last = std::min(hi, cells - 1);
    if (lo == 0)
        next[0] = 0.0f;
    if (hi == cells)
        next[cells - 1] = 0.0f;
    for (std::size_t i = first; i < last; ++i) {
        const float laplacian = current[i - 1] - 2.0f * current[i] + current[i + 1];
        next[i] = damp * (2.0f * current[i] - previous[i] + c * laplacian);
    }
}

// Runs `frames` frames on `field`; a runner whose pool (and partitioner) lives as long as it
// does, so that rounds of different runtimes can be interleaved.
using stencil_runner = std::function<void(stencil_field& field, int frames)>;

struct stencil_competitor {
    std::string name;
    std::function<stencil_runner(int workers)> make;
};

inline std::vector<stencil_competitor>& stencil_competitors() {
    static std::vector<stencil_competitor> all;
    return all;
}

struct stencil_registrar {
    explicit stencil_registrar(stencil_competitor c) {
        stencil_competitors().push_back(std::move(c));
    }
};

} // namespace fj_perf::range_split
