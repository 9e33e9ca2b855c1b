// The seed of a randomised stress run: fresh each run (so CI keeps exploring new cases), or fixed
// with FJ_STRESS_SEED=<n> to replay one; a failing run prints it with the way to replay it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace fj_test {

inline std::uint64_t stress_seed() {
    if (const char* fixed = std::getenv("FJ_STRESS_SEED"); fixed != nullptr && *fixed != '\0')
        return std::strtoull(fixed, nullptr, 10);
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// "seed 123 (replay: FJ_STRESS_SEED=123 <test binary> --gtest_filter=<this test>)".
inline std::string replay_hint(std::uint64_t seed) {
    return "seed " + std::to_string(seed) + " (replay: FJ_STRESS_SEED=" + std::to_string(seed) +
           " with --gtest_filter for this test)";
}

} // namespace fj_test
