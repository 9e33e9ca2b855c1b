// The Bailey-Borwein-Plouffe formula, shared by examples/bbp_pi.cpp and the perf/ drivers.
//
//   pi = sum_k 16^-k (4/(8k+1) - 2/(8k+4) - 1/(8k+5) - 1/(8k+6))
//
// series_term(k) is one term of the sum. hex_digit_of_pi(d) computes the hexadecimal digit of pi at
// position d after the point on its own, without the digits before it (BBP's digit extraction):
// the fractional part of 16^d pi is sum_j c_j frac(16^d S_j) with S_j = sum_k 1/(16^k (8k+j)), and
// the terms with k <= d are reduced modulo 8k+j by modular exponentiation. Position d costs
// O(d log d), so a range of positions is an uneven load: later positions cost more.
#pragma once

#include <cmath>
#include <cstdint>

namespace bbp {

inline double series_term(std::uint64_t k) {
    const double k8 = 8.0 * static_cast<double>(k);
    // ldexp is exact and cheaper than pow; past k ~ 270 the factor underflows to 0.
    return std::ldexp(1.0, -4 * static_cast<int>(k < 1000 ? k : 1000)) *
           (4.0 / (k8 + 1.0) - 2.0 / (k8 + 4.0) - 1.0 / (k8 + 5.0) - 1.0 / (k8 + 6.0));
}

// 16^e mod m, for m < 2^32 (so products fit in 64 bits).
inline std::uint64_t pow16_mod(std::uint64_t e, std::uint64_t m) {
    std::uint64_t result = 1 % m;
    std::uint64_t base = 16 % m;
    while (e != 0) {
        if (e & 1)
            result = result * base % m;
        base = base * base % m;
        e >>= 1;
    }
    return result;
}

// frac(16^d S_j).
inline double frac_series(int j, std::uint64_t d) {
    double s = 0.0;
    for (std::uint64_t k = 0; k <= d; ++k) {
        const std::uint64_t m = 8 * k + static_cast<std::uint64_t>(j);
        s += static_cast<double>(pow16_mod(d - k, m)) / static_cast<double>(m);
        s -= std::floor(s);
    }
    // The tail k > d: 16^(d-k) / (8k+j), small and quickly negligible.
    double factor = 1.0 / 16.0;
    for (std::uint64_t k = d + 1; factor > 1e-17; ++k, factor /= 16.0)
        s += factor / static_cast<double>(8 * k + static_cast<std::uint64_t>(j));
    return s - std::floor(s);
}

// The hexadecimal digit of pi at position d after the point (d = 0 is the 2 of 3.243F...), as
// 0..15. Exact for positions up to about 10^7 (double rounding stays far below one digit).
inline int hex_digit_of_pi(std::uint64_t d) {
    double x =
        4.0 * frac_series(1, d) - 2.0 * frac_series(4, d) - frac_series(5, d) - frac_series(6, d);
    x -= std::floor(x);
    return static_cast<int>(16.0 * x);
}

inline char hex_char(int digit) {
    return "0123456789ABCDEF"[digit & 15];
}

} // namespace bbp
