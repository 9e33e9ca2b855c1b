// The A* search of astar_bench (docs/performance.md#astar), in the shape of oneTBB's "shortpath"
// example: a best-first search whose tasks start more tasks from inside their work loop.
//
//   graph      N vertices at random points of a square (fixed seed; the start, vertex 0, and the
//              goal, vertex N-1, near opposite corners), each with up to 4 out-edges
//              to random vertices of its own or a neighbouring cell of a grid of ~4 vertices a
//              cell, plus edges both ways between vertices that follow each other in a snake
//              walk through the cells (so every vertex is reachable). An edge weighs its
//              euclidean length times a factor in [1, 1.5): the straight-line distance to the goal
//              never overestimates, and is consistent.
//   serial     A* from vertex 0 to vertex N-1: a binary heap of (f, g, vertex), stale entries
//              skipped, stops when the goal is popped.
//   parallel   the same search by helper tasks sharing one open set (a std::priority_queue under
//              a spin lock) and one g-value per vertex (written under the vertex's spin lock). A
//              helper pops the best entry and relaxes its out-edges; inside that loop, each time
//              it pushes a vertex and fewer than N/16 helpers are live, it starts another helper
//              with group.run(). A helper leaves when the open set is empty or its best entry
//              cannot beat the goal's current g (the goal itself popped, or anything no better):
//              then it clears the open set. A helper still relaxing may lower the goal's g later
//              and pushes what it improves, so the search ends when the last helper leaves, with
//              the shortest length. Written once over the group type: fj::task_group and
//              tbb::task_group both fit (competitors/tbb_astar.cpp, astar_bench.cpp).
//
// Every run's length is checked against the serial search's by the driver.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

namespace fj_perf::astar {

inline constexpr double k_infinity = std::numeric_limits<double>::infinity();

struct edge {
    int to;
    double weight;
};

// Compressed adjacency: vertex v's out-edges are edges[first[v] .. first[v + 1]).
struct graph {
    std::vector<double> x, y;
    std::vector<std::size_t> first;
    std::vector<edge> edges;

    int vertices() const { return static_cast<int>(x.size()); }
    int goal() const { return vertices() - 1; }
    // The straight-line distance from v to the goal: the heuristic.
    double h(int v) const { return std::hypot(x[v] - x[goal()], y[v] - y[goal()]); }
};

// splitmix64: a fixed sequence on every platform, unlike the standard distributions.
class random_bits {
public:
    explicit random_bits(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; } // [0, 1)
    int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

private:
    std::uint64_t m_state;
};

inline graph make_graph(int n, std::uint64_t seed = 2026) {
    constexpr double side = 1000.0;
    constexpr int max_random_edges = 4;
    random_bits rng(seed);
    graph g;
    g.x.resize(static_cast<std::size_t>(n));
    g.y.resize(static_cast<std::size_t>(n));
    for (int v = 0; v < n; ++v) {
        g.x[v] = rng.unit() * side;
        g.y[v] = rng.unit() * side;
    }
    // The start near one corner, the goal near the opposite one: the search crosses the square.
    g.x[0] = g.y[0] = 0.01 * side;
    g.x[n - 1] = g.y[n - 1] = 0.99 * side;
    // A grid of about 4 vertices a cell.
    const int cells = std::max(1, static_cast<int>(std::sqrt(n / 4.0)));
    auto cell_of = [&](double c) {
        return std::min(cells - 1, static_cast<int>(c / side * cells));
    };
    std::vector<std::vector<int>> in_cell(static_cast<std::size_t>(cells) * cells);
    for (int v = 0; v < n; ++v)
        in_cell[static_cast<std::size_t>(cell_of(g.y[v])) * cells + cell_of(g.x[v])].push_back(v);

    std::vector<std::vector<int>> out(static_cast<std::size_t>(n));
    for (int v = 0; v < n; ++v) {
        const int cx = cell_of(g.x[v]), cy = cell_of(g.y[v]);
        const int wanted = 1 + rng.below(max_random_edges);
        for (int tries = 0; static_cast<int>(out[v].size()) < wanted && tries < 4 * wanted;
             ++tries) {
            const int nx = std::clamp(cx + rng.below(3) - 1, 0, cells - 1);
            const int ny = std::clamp(cy + rng.below(3) - 1, 0, cells - 1);
            const auto& there = in_cell[static_cast<std::size_t>(ny) * cells + nx];
            if (there.empty())
                continue;
            const int u =
                there[static_cast<std::size_t>(rng.below(static_cast<int>(there.size())))];
            if (u != v && std::find(out[v].begin(), out[v].end(), u) == out[v].end())
                out[v].push_back(u);
        }
    }
    // The snake walk: rows of cells, alternately left to right and right to left.
    int previous = -1;
    for (int cy = 0; cy < cells; ++cy)
        for (int i = 0; i < cells; ++i) {
            const int cx = cy % 2 == 0 ? i : cells - 1 - i;
            for (const int v : in_cell[static_cast<std::size_t>(cy) * cells + cx]) {
                if (previous >= 0) {
                    out[previous].push_back(v);
                    out[v].push_back(previous);
                }
                previous = v;
            }
        }

    g.first.reserve(static_cast<std::size_t>(n) + 1);
    g.first.push_back(0);
    for (int v = 0; v < n; ++v) {
        for (const int u : out[v]) {
            const double length = std::hypot(g.x[u] - g.x[v], g.y[u] - g.y[v]);
            g.edges.push_back({u, length * (1.0 + 0.5 * rng.unit())});
        }
        g.first.push_back(g.edges.size());
    }
    return g;
}

// What a search returns: the shortest length from 0 to the goal, the entries popped from the
// open set and the helpers started (the parallel search only).
struct result {
    double length = k_infinity;
    long pops = 0;
    long helpers = 0;
};

struct open_entry {
    double f; // g + h
    double g;
    int vertex;
    bool operator>(const open_entry& o) const { return f > o.f; }
};
using open_queue =
    std::priority_queue<open_entry, std::vector<open_entry>, std::greater<open_entry>>;

inline result search_serial(const graph& gr) {
    const int goal = gr.goal();
    std::vector<double> g(static_cast<std::size_t>(gr.vertices()), k_infinity);
    open_queue open;
    g[0] = 0;
    open.push({gr.h(0), 0, 0});
    result r;
    while (!open.empty()) {
        const open_entry e = open.top();
        open.pop();
        ++r.pops;
        if (e.g > g[e.vertex])
            continue; // stale: the vertex was pushed again with a smaller g
        if (e.vertex == goal) {
            r.length = e.g;
            break;
        }
        for (std::size_t i = gr.first[e.vertex]; i < gr.first[e.vertex + 1]; ++i) {
            const edge& ed = gr.edges[i];
            const double d = e.g + ed.weight;
            if (d < g[ed.to]) {
                g[ed.to] = d;
                open.push({d + gr.h(ed.to), d, ed.to});
            }
        }
    }
    return r;
}

// Test-and-test-and-set, yielding after a while so that a preempted holder gets the CPU back.
class spin_lock {
public:
    void lock() noexcept {
        for (int spins = 0; m_locked.exchange(true, std::memory_order_acquire);) {
            while (m_locked.load(std::memory_order_relaxed))
                if (++spins > 64)
                    std::this_thread::yield();
        }
    }
    void unlock() noexcept { m_locked.store(false, std::memory_order_release); }

private:
    std::atomic<bool> m_locked{false};
};

template <class Group>
class parallel_search {
public:
    parallel_search(const graph& gr, Group& group)
        : m_graph(gr), m_group(group), m_vertex(static_cast<std::size_t>(gr.vertices())),
          m_max_helpers(std::max(1, gr.vertices() / 16)) {}

    // Run inside the runtime's pool or arena; returns once the search is over.
    result run() {
        m_vertex[0].g.store(0, std::memory_order_relaxed);
        m_open.push({m_graph.h(0), 0, 0});
        start_helper();
        m_group.wait();
        result r;
        r.length = m_vertex[static_cast<std::size_t>(m_graph.goal())].g.load();
        r.pops = m_pops;
        r.helpers = m_started.load();
        return r;
    }

private:
    struct vertex_state {
        spin_lock lock;
        std::atomic<double> g{k_infinity}; // written under lock, read anywhere
    };

    double bound() const {
        return m_vertex[static_cast<std::size_t>(m_graph.goal())].g.load(std::memory_order_relaxed);
    }

    void start_helper() {
        m_live.fetch_add(1, std::memory_order_relaxed);
        m_started.fetch_add(1, std::memory_order_relaxed);
        m_group.run([this] { helper(); });
    }

    void helper() {
        for (;;) {
            open_entry e;
            {
                std::lock_guard<spin_lock> hold(m_open_lock);
                if (m_open.empty())
                    break;
                e = m_open.top();
                if (e.f >= bound()) { // nothing left can shorten the path
                    m_open = open_queue();
                    break;
                }
                m_open.pop();
                ++m_pops;
            }
            if (e.g >
                m_vertex[static_cast<std::size_t>(e.vertex)].g.load(std::memory_order_relaxed))
                continue; // stale
            for (std::size_t i = m_graph.first[e.vertex]; i < m_graph.first[e.vertex + 1]; ++i) {
                const edge& ed = m_graph.edges[i];
                const double d = e.g + ed.weight;
                const double f = d + m_graph.h(ed.to);
                if (f >= bound())
                    continue;
                vertex_state& to = m_vertex[static_cast<std::size_t>(ed.to)];
                {
                    std::lock_guard<spin_lock> hold(to.lock);
                    if (!(d < to.g.load(std::memory_order_relaxed)))
                        continue;
                    to.g.store(d, std::memory_order_relaxed);
                }
                {
                    std::lock_guard<spin_lock> hold(m_open_lock);
                    m_open.push({f, d, ed.to});
                }
                if (m_live.load(std::memory_order_relaxed) < m_max_helpers)
                    start_helper();
            }
        }
        m_live.fetch_sub(1, std::memory_order_relaxed);
    }

    const graph& m_graph;
    Group& m_group;
    std::vector<vertex_state> m_vertex;
    const int m_max_helpers;
    spin_lock m_open_lock;
    open_queue m_open; // under m_open_lock
    long m_pops = 0;   // under m_open_lock
    std::atomic<int> m_live{0};
    std::atomic<long> m_started{0};
};

// A runtime's entry: make(workers) returns a search (graph -> result) whose pool or arena lives as
// long as it does, so that rounds of different runtimes can be interleaved.
using runner = std::function<result(const graph&)>;
struct competitor {
    std::string name;
    std::function<runner(int workers)> make;
};

inline std::vector<competitor>& competitors() {
    static std::vector<competitor> all;
    return all;
}

struct registrar {
    explicit registrar(competitor c) { competitors().push_back(std::move(c)); }
};

} // namespace fj_perf::astar
