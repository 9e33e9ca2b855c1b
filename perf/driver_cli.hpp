// The command line of the small standalone drivers (park_ab, join_latency): "--name value" pairs,
// integers (and lists of them) with a lower bound, and a usage message that ends the program with
// status 2.
#pragma once

#include "measure.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace fj_perf {

class driver_cli {
public:
    // usage: the options part of the usage line, e.g. "[--n 37] [--rounds 11]".
    driver_cli(const char* program, const char* usage, int argc, char** argv) noexcept
        : m_program(program), m_usage(usage), m_argc(argc), m_argv(argv) {}

    // Calls on_option(name, value) for each "--name value" pair in order. A name without a value
    // (--help among them) ends the program with the usage message.
    template <class OnOption>
    void for_each_option(OnOption&& on_option) const {
        for (int i = 1; i < m_argc; ++i) {
            const std::string name = m_argv[i];
            if (i + 1 >= m_argc)
                fail(name == "--help" ? "help" : "missing value after " + name);
            on_option(name, std::string(m_argv[++i]));
        }
    }

    [[noreturn]] void fail(const std::string& why) const {
        std::fprintf(stderr, "%s: %s\nusage: %s %s\n", m_program, why.c_str(), m_program, m_usage);
        std::exit(2);
    }

    // value as an integer of at least lo, or the usage message naming the option.
    int integer(const std::string& value, int lo, const std::string& name) const {
        try {
            std::size_t used = 0;
            const int v = std::stoi(value, &used);
            if (used == value.size() && v >= lo)
                return v;
        } catch (const std::exception&) {
        }
        fail(name + " must be an integer >= " + std::to_string(lo) + ", got '" + value + "'");
    }

    // value as a comma-separated list of such integers ("1,2,4").
    std::vector<int> integers(const std::string& value, int lo, const std::string& name) const {
        std::vector<int> list;
        for (const auto& item : split(value))
            list.push_back(integer(item, lo, name));
        return list;
    }

private:
    const char* m_program;
    const char* m_usage;
    int m_argc;
    char** m_argv;
};

} // namespace fj_perf
