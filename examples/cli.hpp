// What every example's main() shares: timing a call, and command-line parsing that fails with a
// one-line reason and the program's usage (exit code 2), never a crash or a silent default.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace cli {

// The program's name and usage line, set once at the top of main().
struct program_info {
    const char* name = "example";
    const char* usage = "";
};

inline program_info& program() {
    static program_info info;
    return info;
}

[[noreturn]] inline void usage(const std::string& why) {
    std::fprintf(stderr, "%s: %s\nusage: %s\n", program().name, why.c_str(), program().usage);
    std::exit(2);
}

// A whole number in [lo, hi], or usage() naming the option and the accepted range.
template <class T>
T parse(const char* text, T lo, T hi, const char* what) {
    static_assert(std::is_integral_v<T>);
    char* end = nullptr;
    bool ok = false;
    T value{};
    if constexpr (std::is_signed_v<T>) {
        const long long v = std::strtoll(text, &end, 10);
        ok = end != text && *end == '\0' && v >= lo && v <= hi;
        value = static_cast<T>(v);
    } else {
        const unsigned long long v = std::strtoull(text, &end, 10);
        // strtoull accepts "-1" (and wraps it): refuse a sign outright.
        ok = end != text && *end == '\0' && text[0] != '-' && v >= lo && v <= hi;
        value = static_cast<T>(v);
    }
    if (!ok)
        usage(std::string(what) + " must be an integer in [" + std::to_string(lo) + ", " +
              std::to_string(hi) + "], got '" + text + "'");
    return value;
}

template <class F>
double seconds(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace cli
