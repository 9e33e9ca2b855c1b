// What the standalone perf drivers (overhead, loops) share: option-list splitting, medians,
// timing, the load average, and the interference meter that flags a table measured while other
// processes ran.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fj_perf {

using clock_type = std::chrono::steady_clock;

// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split(std::string_view s) {
    std::vector<std::string> out;
    while (!s.empty()) {
        auto const comma = s.find(',');
        out.emplace_back(s.substr(0, comma));
        if (comma == std::string_view::npos)
            break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t const m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

template <class F>
double seconds_of(F&& f) {
    auto const t0 = clock_type::now();
    f();
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Busy for d: a spinning task holds its worker the way real computation does (a sleeping one
// would hand the core to another thread).
inline void spin_for(clock_type::duration d) {
    auto const end = clock_type::now() + d;
    while (clock_type::now() < end) {
    }
}

// CPU seconds used by this process (user + system).
inline double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto tv = [](timeval t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
    return tv(u.ru_utime) + tv(u.ru_stime);
}

// Busy CPU seconds of the whole machine, from /proc/stat (user nice system idle iowait irq
// softirq steal ...): everything but idle and iowait. -1 if unreadable.
inline double machine_busy_seconds() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    double v[8] = {};
    if (!(in >> cpu) || cpu != "cpu")
        return -1;
    for (double& x : v)
        in >> x;
    if (!in)
        return -1;
    double const busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    return busy / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The 1, 5 and 15 minute load averages from /proc/loadavg, e.g. "0.66 1.97 2.40".
inline std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(in >> one >> five >> fifteen))
        return "unknown";
    return one + " " + five + " " + fifteen;
}

// What the interference meter saw over one part: wall time and the CPU that other processes
// used meanwhile (other_cpu_seconds < 0: /proc/stat was unreadable).
struct interference {
    double wall_seconds = 0;
    double other_cpu_seconds = -1;
};

// Timing on a 2-core machine is only meaningful when nothing else runs. This reports the CPU
// that other processes used while a part ran, so a disturbed table is recognisable as such.
class interference_meter {
public:
    interference_meter()
        : m_wall(clock_type::now()), m_busy(machine_busy_seconds()), m_self(cpu_seconds()) {}
    interference report(std::string_view part) const {
        double const busy = machine_busy_seconds();
        double const wall = std::chrono::duration<double>(clock_type::now() - m_wall).count();
        if (busy < 0 || m_busy < 0)
            return {wall, -1};
        double const other = std::max(0.0, (busy - m_busy) - (cpu_seconds() - m_self));
        std::printf(
            "[%.*s: %.1f s wall; other processes used %.1f CPU-s (%.0f%% of one core)%s]\n\n",
            static_cast<int>(part.size()), part.data(), wall, other, 100 * other / wall,
            other / wall > 0.05 ? "  << DISTURBED: rerun on a quiet machine" : "");
        return {wall, other};
    }

private:
    clock_type::time_point m_wall;
    double m_busy;
    double m_self;
};

// Idle time between timed runs: lets other runtimes' threads stop spinning.
inline void cooldown(int ms) {
    if (ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

inline std::string fmt(char const* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Paired ratios: for each pair of rows (a row named "serial" only as the divisor), the per-round
// ratio row / other, printed as its median and range. ms[i][r] is row i's time in round r.
inline void print_paired_ratios(const std::vector<std::string>& names,
                                const std::vector<std::vector<double>>& ms) {
    for (std::size_t i = 0; i < names.size(); ++i)
        for (std::size_t j = 0; j < names.size(); ++j) {
            if (i == j || names[i] == "serial")
                continue;
            std::vector<double> ratio;
            for (std::size_t r = 0; r < ms[i].size() && r < ms[j].size(); ++r)
                ratio.push_back(ms[i][r] / ms[j][r]);
            if (ratio.empty())
                continue;
            std::sort(ratio.begin(), ratio.end());
            std::printf("  %s / %s = %.3f (%.3f-%.3f)\n", names[i].c_str(), names[j].c_str(),
                        median(ratio), ratio.front(), ratio.back());
        }
}

} // namespace fj_perf
