// Counting primes with a segmented sieve written as oneTBB's imperative reduction body: the
// shape of oneTBB's primes example (docs/performance-algorithms.md#primes), shared by forkjoin and
// oneTBB.
//
// The body keeps state between the pieces it is given: for each small prime, the next multiple
// to strike. A piece that starts where the body's previous piece ended goes on with it; any other
// piece first recomputes it (one division per small prime). A runtime that hands contiguous
// pieces to one body does less of that work, which is what this measures beside the splitting.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fj_perf {

// The primes up to `limit` by a plain sieve: the strikers every body shares.
inline std::vector<long> small_primes(long limit) {
    std::vector<bool> composite(static_cast<std::size_t>(limit + 1));
    std::vector<long> primes;
    for (long p = 2; p <= limit; ++p) {
        if (composite[static_cast<std::size_t>(p)])
            continue;
        primes.push_back(p);
        for (long m = p * p; m <= limit; m += p)
            composite[static_cast<std::size_t>(m)] = true;
    }
    return primes;
}

inline long isqrt(long n) {
    long r = static_cast<long>(std::sqrt(static_cast<double>(n)));
    while (r * r > n)
        --r;
    while ((r + 1) * (r + 1) <= n)
        ++r;
    return r;
}

// Range: a blocked_range<long> of the runtime (begin(), end()); Split: its splitting tag.
template <class Range, class Split>
class sieve_body {
public:
    static constexpr long k_window = 32 * 1024; // bytes of flags: about an L1 data cache

    explicit sieve_body(const std::vector<long>& primes)
        : m_primes(&primes), m_next(primes.size()), m_window(k_window) {}
    // Reads only the shared, read-only primes: safe while `other` works.
    sieve_body(sieve_body& other, Split) : sieve_body(*other.m_primes) {}

    void operator()(const Range& r) {
        long lo = r.begin();
        const long hi = r.end();
        if (lo != m_position)
            restart(lo);
        while (lo < hi) {
            const long end = std::min(hi, lo + k_window);
            m_count += sieve(lo, end);
            lo = end;
        }
        m_position = hi;
    }

    void join(sieve_body& other) {
        m_count += other.m_count;
        m_restarts += other.m_restarts;
        m_bodies += other.m_bodies;
    }
    long count() const { return m_count; }
    // Pieces that did not continue the body's previous one, and bodies made, joined in.
    long restarts() const { return m_restarts; }
    long bodies() const { return m_bodies; }

private:
    void restart(long lo) {
        ++m_restarts;
        for (std::size_t i = 0; i < m_next.size(); ++i) {
            const long p = (*m_primes)[i];
            m_next[i] = std::max(p * p, (lo + p - 1) / p * p);
        }
    }

    // The primes in [lo, end): strike every multiple of a small prime, count what is left. Raw
    // pointers in locals: a byte store may alias anything, so through `this` the compiler would
    // reload the vectors' pointers after every strike.
    long sieve(long lo, long end) {
        const auto width = static_cast<std::size_t>(end - lo);
        std::uint8_t* const window = m_window.data();
        long* const next = m_next.data();
        const long* const primes = m_primes->data();
        const std::size_t count = m_next.size();
        std::fill(window, window + width, std::uint8_t{0});
        for (std::size_t i = 0; i < count; ++i) {
            const long p = primes[i];
            long m = next[i];
            for (; m < end; m += p)
                window[m - lo] = 1;
            next[i] = m;
        }
        return static_cast<long>(std::count(window, window + width, std::uint8_t{0}));
    }

    const std::vector<long>* m_primes;
    std::vector<long> m_next;
    std::vector<std::uint8_t> m_window;
    long m_position = -1;
    long m_count = 0;
    long m_restarts = 0;
    long m_bodies = 1;
};

// One count: the primes, and how the runtime grouped the pieces into bodies.
struct primes_result {
    long primes = 0;
    long restarts = 0;
    long bodies = 0;
};

// A runtime's entry: make(workers) returns a counter (primes up to n) whose pool lives as long as
// it does, so that rounds of different runtimes can be interleaved.
struct primes_competitor {
    std::string name;
    std::function<std::function<primes_result(long n)>(int workers)> make;
};

inline std::vector<primes_competitor>& primes_competitors() {
    static std::vector<primes_competitor> all;
    return all;
}

struct primes_registrar {
    explicit primes_registrar(primes_competitor c) { primes_competitors().push_back(std::move(c)); }
};

// The grain both runtimes are given: pieces of at least this many numbers.
inline constexpr long k_primes_grain = 1 << 16;

} // namespace fj_perf
