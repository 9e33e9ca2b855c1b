// The sort_bench driver's workloads (sort_bench.cpp): what is sorted, its sizes and its check.
//
//   ints     10^7 uniformly random 32-bit ints: cheap compares, memory-bound partitions
//   doubles  10^6 uniformly random doubles in [0, 1)
//   strings  10^6 random decimal strings of 1-12 digits: compares that chase pointers
//
// Inputs come from fixed seeds; every timed run sorts a fresh copy and is checked against
// std::sort's output (sorting is not stable, but equal values are indistinguishable here).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace fj_perf {

enum class sort_workload { ints, doubles, strings };
inline constexpr sort_workload k_sort_workloads[] = {sort_workload::ints, sort_workload::doubles,
                                                     sort_workload::strings};
inline constexpr std::uint64_t k_sort_ints_n = 10'000'000;
inline constexpr std::uint64_t k_sort_doubles_n = 1'000'000;
inline constexpr std::uint64_t k_sort_strings_n = 1'000'000;

inline std::string_view workload_name(sort_workload w) {
    switch (w) {
    case sort_workload::ints:
        return "ints";
    case sort_workload::doubles:
        return "doubles";
    case sort_workload::strings:
        return "strings";
    }
    return "?";
}

inline std::vector<std::int32_t> make_sort_ints(std::uint64_t n) {
    std::mt19937 rng(12345);
    std::vector<std::int32_t> v(n);
    for (auto& x : v)
        x = static_cast<std::int32_t>(rng());
    return v;
}

inline std::vector<double> make_sort_doubles(std::uint64_t n) {
    std::mt19937_64 rng(23456);
    std::uniform_real_distribution<double> dist(0.0, 1.0);
    std::vector<double> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

inline std::vector<std::string> make_sort_strings(std::uint64_t n) {
    std::mt19937_64 rng(34567);
    std::vector<std::string> v(n);
    for (auto& s : v)
        s = std::to_string(rng() % 1'000'000'000'000ULL);
    return v;
}

} // namespace fj_perf
