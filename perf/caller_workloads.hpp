// The workloads of caller_bench: parallel calls made from main, a thread outside every pool, the
// way a serial program calls a parallel library at a few hot spots. Each runtime's runner makes
// its pool (scheduler, arena, team size) once and then makes the same calls on every runtime:
//
//   join   `calls` joins of two empty tasks in a row.
//   loop   `calls` parallel loops in a row over [0, 256), each iteration adding 1 to its own slot
//          of marks (so every slot must read `calls` afterwards).
//   power  `iterations` steps of the shape of a power iteration over a vector x of doubles: a
//          parallel sum of x, then a parallel loop x[i] = x[i] * k_scale + k_shift. Returns the
//          sum of the sums; x is left scaled.
//
// The runner does the calls in a loop of its own, so the driver times `calls` calls (or the
// whole program) under one clock and a call's time is their mean.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fj_perf::caller {

inline constexpr int k_loop_size = 256;
inline constexpr double k_scale = 0.999;
inline constexpr double k_shift = 1e-6;

// x before the first step: values between 1 and 2, none zero (x tends to k_shift / (1 - k_scale)
// = 0.001 and stays far above the denormals).
inline std::vector<double> power_initial(std::size_t n) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = 1.0 + static_cast<double>(i % 1000) * 0.001;
    return x;
}

class caller_runner {
public:
    virtual ~caller_runner() = default;
    virtual void join(int calls) = 0;
    // marks has k_loop_size slots.
    virtual void loop(int calls, int* marks) = 0;
    virtual double power(std::vector<double>& x, int iterations) = 0;
};

struct caller_competitor {
    std::string name;
    // What the runtime's calls are, for the legend.
    std::string what;
    std::unique_ptr<caller_runner> (*make)(int workers);
};

inline std::vector<caller_competitor>& caller_competitors() {
    static std::vector<caller_competitor> table;
    return table;
}

struct caller_registrar {
    explicit caller_registrar(caller_competitor c) { caller_competitors().push_back(std::move(c)); }
};

} // namespace fj_perf::caller
