// oneTBB's "square" pipeline: read whitespace-separated numbers from a text, square each in a
// parallel stage, write the squares in input order. The same three stages for every runtime
// (competitors/*_pipeline.cpp); `work` adds a few microseconds of computation per item to the
// parallel stage, the case a pipeline is for. The serial reference and the check are here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fj_perf {

// n numbers, ten to a line, some negative.
inline std::string pipeline_text(long n) {
    std::string text;
    for (long i = 0; i < n; ++i)
        text += std::to_string(i * 7919 % 1'000'003 - 500'000) + (i % 10 == 9 ? "\n" : " ");
    return text;
}

// The parallel stage: the square, plus `work` dependent multiply-adds folded into a digit (so the
// compiler keeps them); ~1 ns each on this machine.
inline std::string square_item(long long x, int work) {
    std::uint64_t h = static_cast<std::uint64_t>(x);
    for (int i = 0; i < work; ++i)
        h = h * 6364136223846793005ull + 1442695040888963407ull;
    std::string out = std::to_string(x * x);
    if (work > 0)
        out += static_cast<char>('a' + h % 26);
    out += '\n';
    return out;
}

// A runtime's entry: make(workers) returns a pipeline runner (text, tokens, work) -> output whose
// pool lives as long as it does, so that rounds of different runtimes can be interleaved.
using pipeline_runner = std::function<std::string(const std::string&, int tokens, int work)>;
struct pipeline_competitor {
    std::string name;
    std::function<pipeline_runner(int workers)> make;
};

inline std::vector<pipeline_competitor>& pipeline_competitors() {
    static std::vector<pipeline_competitor> all;
    return all;
}

struct pipeline_registrar {
    explicit pipeline_registrar(pipeline_competitor c) {
        pipeline_competitors().push_back(std::move(c));
    }
};

} // namespace fj_perf
