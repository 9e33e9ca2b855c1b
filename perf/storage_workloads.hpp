// The workloads of storage_bench (docs/performance-algorithms.md#scan-and-per-thread-storage),
// shared by the forkjoin driver and the oneTBB competitor file:
//
//   scan       an inclusive prefix sum of n doubles in [0, 1). Checked against the serial
//              std::inclusive_scan to a relative 1e-9 (the parallel scans add in another order).
//   body_scan  the same prefix sum through the body-style scan (oneTBB's parallel_scan(range,
//              body)), one body type for both libraries: prefix_sum_body below. Checked as scan.
//   functional_scan
//              the same prefix sum through oneTBB's functional form, parallel_scan(range,
//              identity, body, combine), with prefix_sum_function below in both libraries (oneTBB's
//              scan row already is this form). Checked as scan.
//   histogram  n keys into 256 bins, one per-thread histogram (a combinable of 256 counters) with
//              local() called for every key, then combined. Checked exactly against the serial
//              count.
//
// A competitor makes a runner for a worker count; the runner keeps its pool between rounds, so
// the driver can interleave the rounds of every runner.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fj_perf {

constexpr std::size_t k_scan_n = 20'000'000;
constexpr std::size_t k_histogram_n = 20'000'000;
constexpr std::size_t k_bins = 256;

using histogram = std::array<std::uint64_t, k_bins>;

inline std::vector<double> scan_input(std::size_t n) {
    std::vector<double> v(n);
    std::uint64_t x = 88172645463325252ull;
    for (auto& d : v) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        d = static_cast<double>(x >> 11) * 0x1.0p-53;
    }
    return v;
}

inline std::vector<std::uint32_t> histogram_keys(std::size_t n) {
    std::vector<std::uint32_t> keys(n);
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (auto& k : keys) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        k = static_cast<std::uint32_t>(x % k_bins);
    }
    return keys;
}

// oneTBB's running-sum scan body, as its documentation writes it; the tag, split and range types
// are template parameters, so fj and oneTBB run this same code. sum: the state.
struct prefix_sum_body {
    const double* in;
    double* out;
    double sum = 0;

    prefix_sum_body(const double* i, double* o) : in(i), out(o) {}
    template <class Split>
    prefix_sum_body(prefix_sum_body& b, Split) : in(b.in), out(b.out) {}
    template <class Range, class Tag>
    void operator()(const Range& r, Tag) {
        double s = sum;
        for (auto i = r.begin(); i != r.end(); ++i) {
            s += in[i];
            if (Tag::is_final_scan())
                out[i] = s;
        }
        sum = s;
    }
    void reverse_join(prefix_sum_body& left) { sum = left.sum + sum; }
    void assign(prefix_sum_body& b) { sum = b.sum; }
};

// oneTBB's functional scan body, (range, sum, is_final) -> sum, for both libraries.
struct prefix_sum_function {
    const double* in;
    double* out;

    template <class Range>
    double operator()(const Range& r, double sum, bool is_final) const {
        for (auto i = r.begin(); i != r.end(); ++i) {
            sum += in[i];
            if (is_final)
                out[i] = sum;
        }
        return sum;
    }
};

class storage_runner {
public:
    virtual ~storage_runner() = default;
    virtual void scan(const std::vector<double>& in, std::vector<double>& out) = 0;
    // The body-style scan with prefix_sum_body; returns the body's final state (the total).
    virtual double body_scan(const std::vector<double>& in, std::vector<double>& out) = 0;
    // The functional parallel_scan with prefix_sum_function.
    virtual void functional_scan(const std::vector<double>& in, std::vector<double>& out) = 0;
    virtual histogram count(const std::vector<std::uint32_t>& keys) = 0;
};

struct storage_competitor {
    std::string name;
    std::unique_ptr<storage_runner> (*make)(int workers);
};

inline std::vector<storage_competitor>& storage_competitors() {
    static std::vector<storage_competitor> table;
    return table;
}

struct storage_registrar {
    explicit storage_registrar(storage_competitor c) {
        storage_competitors().push_back(std::move(c));
    }
};

} // namespace fj_perf
