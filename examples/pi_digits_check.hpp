// Checks computed hexadecimal digits of pi against the table in pi_hex_digits.hpp and prints the
// verdict, so that every BBP example (bbp_pi, mpi_bbp_pi) says the same thing the same way.
#pragma once

#include "pi_hex_digits.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace pi_table {

// `digits` holds the hex digits at positions [from, from + digits.size()). Prints
// "hex digits match the table (N checked)" and returns true, or names the first wrong digit and
// returns false. Positions past the table cannot be checked: that is printed, and returns true.
inline bool check_hex_digits(std::uint64_t from, std::string_view digits) {
    const auto& table = k_hex_digits;
    if (from >= table.size()) {
        std::printf("hex digits not checked: the table holds positions below %zu\n", table.size());
        return true;
    }
    const std::uint64_t checked = std::min<std::uint64_t>(digits.size(), table.size() - from);
    for (std::uint64_t i = 0; i < checked; ++i)
        if (digits[i] != table[from + i]) {
            std::printf("WRONG: digit at position %llu is %c, the table says %c\n",
                        static_cast<unsigned long long>(from + i), digits[i], table[from + i]);
            return false;
        }
    std::printf("hex digits match the table (%llu checked)\n",
                static_cast<unsigned long long>(checked));
    return true;
}

} // namespace pi_table
