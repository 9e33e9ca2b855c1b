// storage_bench: fj::inclusive_scan against oneTBB's tbb::parallel_scan and the serial
// std::inclusive_scan; the functional fj::parallel_scan against the same tbb::parallel_scan with
// the same body; the body-style fj::parallel_scan(range, body) against
// tbb::parallel_scan(range, body) with the same body; and fj::combinable against tbb::combinable
// on a histogram with local() per key (storage_workloads.hpp;
// docs/performance-algorithms.md#scan-and-per-thread-storage).
//
//   storage_bench [--rounds 9] [--workers 1,2] [--n 20000000] [--only
//   scan,functional_scan,body_scan,histogram]
//
// One run: every runner (serial, then each competitor at each worker count) keeps its pool, and
// the rounds are interleaved, the start rotating each round, so a slow phase of the machine hits
// everyone alike. Every run checks its result. Prints per row the median time and, per worker
// count, the median and range of the per-round ratios fj / other (< 1: fj faster).
#include "driver_cli.hpp"
#include "measure.hpp"
#include "storage_workloads.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

using fj_perf::histogram;

class serial_runner final : public fj_perf::storage_runner {
public:
    void scan(const std::vector<double>& in, std::vector<double>& out) override {
        std::inclusive_scan(in.begin(), in.end(), out.begin());
    }
    void functional_scan(const std::vector<double>& in, std::vector<double>& out) override {
        scan(in, out);
    }
    double body_scan(const std::vector<double>& in, std::vector<double>& out) override {
        fj_perf::prefix_sum_body body(in.data(), out.data());
        body(fj::blocked_range<std::size_t>{0, in.size()}, fj::final_scan_tag{});
        return body.sum;
    }
    histogram count(const std::vector<std::uint32_t>& keys) override {
        histogram h{};
        for (std::uint32_t k : keys)
            ++h[k];
        return h;
    }
};

class fj_runner final : public fj_perf::storage_runner {
public:
    explicit fj_runner(int workers) : m_pool(static_cast<std::size_t>(workers)) {}

    void scan(const std::vector<double>& in, std::vector<double>& out) override {
        fj::inclusive_scan(m_pool, in.begin(), in.end(), out.begin());
    }

    void functional_scan(const std::vector<double>& in, std::vector<double>& out) override {
        fj::parallel_scan(m_pool, fj::blocked_range<std::size_t>{0, in.size()}, 0.0,
                          fj_perf::prefix_sum_function{in.data(), out.data()}, std::plus<>{});
    }

    double body_scan(const std::vector<double>& in, std::vector<double>& out) override {
        fj_perf::prefix_sum_body body(in.data(), out.data());
        fj::parallel_scan(m_pool, fj::blocked_range<std::size_t>{0, in.size()}, body);
        return body.sum;
    }

    histogram count(const std::vector<std::uint32_t>& keys) override {
        fj::combinable<histogram> per_thread([] { return histogram{}; });
        fj::parallel_for(m_pool, fj::blocked_range<std::size_t>{0, keys.size()},
                         [&](fj::blocked_range<std::size_t> r) {
                             for (std::size_t i = r.begin(); i != r.end(); ++i)
                                 ++per_thread.local()[keys[i]];
                         });
        return per_thread.combine([](const histogram& a, const histogram& b) {
            histogram s;
            for (std::size_t k = 0; k < fj_perf::k_bins; ++k)
                s[k] = a[k] + b[k];
            return s;
        });
    }

private:
    fj::scheduler m_pool;
};

const fj_perf::storage_registrar reg{
    {"fj", [](int workers) -> std::unique_ptr<fj_perf::storage_runner> {
         return std::make_unique<fj_runner>(workers);
     }}};

struct options {
    int rounds = 9;
    std::vector<int> workers{1, 2};
    std::size_t n = fj_perf::k_scan_n;
    std::vector<std::string> only{"scan", "functional_scan", "body_scan", "histogram"};
};

options parse(int argc, char** argv) {
    const fj_perf::driver_cli cli("storage_bench",
                                  "[--rounds 9] [--workers 1,2] [--n 20000000] [--only "
                                  "scan,functional_scan,body_scan,histogram]",
                                  argc, argv);
    options o;
    cli.for_each_option([&](const std::string& name, const std::string& value) {
        if (name == "--rounds") {
            o.rounds = cli.integer(value, 1, name);
        } else if (name == "--workers") {
            o.workers = cli.integers(value, 1, name);
        } else if (name == "--n") {
            o.n = static_cast<std::size_t>(cli.integer(value, 1, name));
        } else if (name == "--only") {
            o.only = fj_perf::split(value);
        } else {
            cli.fail("unknown option " + name);
        }
    });
    return o;
}

struct row {
    std::string name;
    int workers; // 0: serial
    std::unique_ptr<fj_perf::storage_runner> runner;
    std::vector<double> ms;
};

// Runs `once(runner)` for every row in interleaved rounds (after one untimed, checked warm-up).
template <class Once>
void interleave(std::vector<row>& rows, int rounds, Once&& once) {
    for (auto& r : rows)
        once(*r.runner);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t k = 0; k < rows.size(); ++k) {
            row& r = rows[(k + static_cast<std::size_t>(round)) % rows.size()];
            r.ms.push_back(fj_perf::seconds_of([&] { once(*r.runner); }) * 1e3);
            fj_perf::cooldown(10);
        }
}

void report(const char* what, const std::vector<row>& rows) {
    std::printf("%s\n  %-8s %7s %10s %10s\n", what, "", "workers", "median ms", "vs serial");
    const double serial = fj_perf::median(rows[0].ms);
    for (const auto& r : rows)
        std::printf("  %-8s %7s %10.2f %9.2fx\n", r.name.c_str(),
                    r.workers == 0 ? "-" : std::to_string(r.workers).c_str(), fj_perf::median(r.ms),
                    serial / fj_perf::median(r.ms));
    for (const auto& a : rows)
        for (const auto& b : rows)
            if (a.name == "fj" && b.name != "fj" && (b.workers == a.workers || b.workers == 0)) {
                std::vector<double> ratios;
                for (std::size_t i = 0; i < a.ms.size(); ++i)
                    ratios.push_back(a.ms[i] / b.ms[i]);
                std::printf("  %d workers: fj / %s = %.3f (rounds %.3f..%.3f)\n", a.workers,
                            b.name.c_str(), fj_perf::median(ratios),
                            *std::min_element(ratios.begin(), ratios.end()),
                            *std::max_element(ratios.begin(), ratios.end()));
            }
}

std::vector<row> make_rows(const options& o) {
    std::vector<row> rows;
    rows.push_back({"serial", 0, std::make_unique<serial_runner>(), {}});
    for (const int w : o.workers)
        for (const auto& c : fj_perf::storage_competitors())
            rows.push_back({c.name, w, c.make(w), {}});
    return rows;
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::printf("storage_bench: n = %zu, %d rounds, load average %s\n", o.n, o.rounds,
                fj_perf::load_average().c_str());
    const auto wanted = [&](const char* part) {
        return std::find(o.only.begin(), o.only.end(), part) != o.only.end();
    };
    if (wanted("scan") || wanted("functional_scan") || wanted("body_scan")) {
        const auto in = fj_perf::scan_input(o.n);
        std::vector<double> expected(o.n), out(o.n);
        std::inclusive_scan(in.begin(), in.end(), expected.begin());
        const auto check = [&](const char* what) {
            for (std::size_t i = 0; i < o.n; i += 1 + o.n / 1000)
                if (std::abs(out[i] - expected[i]) > 1e-9 * expected[i] + 1e-12)
                    throw std::runtime_error(std::string(what) + ": wrong result at " +
                                             std::to_string(i));
            if (std::abs(out.back() - expected.back()) > 1e-9 * expected.back())
                throw std::runtime_error(std::string(what) + ": wrong total");
        };
        // One row per scan form: the same input, output and check, a different call.
        const auto scan_row = [&](const char* part, const char* title, auto call) {
            if (!wanted(part))
                return;
            std::vector<row> rows = make_rows(o);
            interleave(rows, o.rounds, [&](fj_perf::storage_runner& r) {
                std::fill(out.begin(), out.end(), -1.0);
                call(r);
                check(part);
            });
            report(title, rows);
        };
        scan_row("scan", "scan (inclusive prefix sum of doubles)",
                 [&](fj_perf::storage_runner& r) { r.scan(in, out); });
        scan_row("functional_scan",
                 "functional_scan (the same body through parallel_scan(range, identity, body, "
                 "combine))",
                 [&](fj_perf::storage_runner& r) { r.functional_scan(in, out); });
        scan_row("body_scan",
                 "body_scan (the same prefix-sum body through parallel_scan(range, body))",
                 [&](fj_perf::storage_runner& r) {
                     const double total = r.body_scan(in, out);
                     if (std::abs(total - expected.back()) > 1e-9 * expected.back())
                         throw std::runtime_error("body_scan: wrong final state");
                 });
    }
    if (wanted("histogram")) {
        const auto keys = fj_perf::histogram_keys(o.n);
        const histogram expected = serial_runner{}.count(keys);
        std::vector<row> rows = make_rows(o);
        interleave(rows, o.rounds, [&](fj_perf::storage_runner& r) {
            if (r.count(keys) != expected)
                throw std::runtime_error("histogram: wrong counts");
        });
        report("histogram (256 bins, local() per key)", rows);
    }
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
}
