// What fj::profile measures (docs/tracing.md#profiler): a computation's work, span and
// parallelism, and the speed-ups they allow. fj::profile() is in <forkjoin/profile.hpp>.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>

namespace fj {

struct profile_report {
    std::chrono::nanoseconds work{0}; // T1: the sum of the time every task ran
    std::chrono::nanoseconds span{0}; // T∞: the critical path
    std::uint64_t tasks = 0;          // tasks measured, the region's root included

    // T1 / T∞: the most workers that can be kept busy on average.
    double parallelism() const noexcept {
        return span.count() > 0
                   ? static_cast<double>(work.count()) / static_cast<double>(span.count())
                   : 0.0;
    }
    // The best speed-up over a serial run possible on `workers` workers: min(P, T1 / T∞).
    double speedup_bound(std::size_t workers) const noexcept {
        const double p = parallelism();
        return static_cast<double>(workers) < p ? static_cast<double>(workers) : p;
    }
    // The speed-up a greedy scheduler guarantees, overheads aside (Brent): T1 / (T1/P + T∞).
    double greedy_speedup(std::size_t workers) const noexcept {
        const double t1 = static_cast<double>(work.count());
        const double denominator =
            t1 / static_cast<double>(workers) + static_cast<double>(span.count());
        return denominator > 0 ? t1 / denominator : 0.0;
    }
};

// One line: work, span, parallelism, tasks.
std::ostream& operator<<(std::ostream& out, const profile_report& report);

namespace detail {
struct profile_region;
// The report of a region whose frames have all ended (runtime/src/observe/profile.cpp).
profile_report make_profile_report(const profile_region& region) noexcept;
} // namespace detail

} // namespace fj
