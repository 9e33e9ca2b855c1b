// The misuse catalogue of docs/errors.md: every public entry point given nonsense. Each test
// checks what happens (the exception type and a key phrase of its message, or that the call
// works) for the rows that no other suite already checks in full; the table names those suites.
// One suite, misuse_test, in three files by topic:
//   misuse_arguments_test.cpp  compile-time rejections; ranges, steps and grains; empty callables
//   misuse_futures_test.cpp    empty, cancelled and combined futures; non-std exceptions
//   misuse_lifecycle_test.cpp  shutdown, options and FJ_WORKERS; the death tests; the problems the
//                              catalogue found, each fixed (docs/errors.md, "Found by this
//                              catalogue, and fixed")
// This header holds what they share: the helpers and the test fixtures.
#pragma once

#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

namespace fj_test::misuse {

// What a statement threw, as seen through `catch (const E&)`.
struct thrown {
    bool right_type = false;
    std::string what; // e.what(), or what happened instead
};

template <class E, class F>
thrown catch_as(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return {true, e.what()};
    } catch (const std::exception& e) {
        return {false,
                std::string("a different exception (") + typeid(e).name() + "): " + e.what()};
    } catch (...) {
        return {false, "an exception not derived from std::exception"};
    }
    return {false, "no exception"};
}

// The statement throws `type` (or a type derived from it) whose what() contains `phrase`.
#define EXPECT_THROW_WITH(statement, type, phrase)                                                 \
    do {                                                                                           \
        const fj_test::misuse::thrown thrown_ =                                                    \
            fj_test::misuse::catch_as<type>([&] { statement; });                                   \
        EXPECT_TRUE(thrown_.right_type)                                                            \
            << #statement << "\n  expected " #type ", got " << thrown_.what;                       \
        EXPECT_NE(thrown_.what.find(phrase), std::string::npos)                                    \
            << #statement << "\n  message \"" << thrown_.what << "\" lacks \"" << (phrase)         \
            << "\"";                                                                               \
    } while (false)

// The statement throws std::future_error with code no_state.
#define EXPECT_NO_STATE(statement)                                                                 \
    do {                                                                                           \
        try {                                                                                      \
            statement;                                                                             \
            ADD_FAILURE() << #statement << ": no exception";                                       \
        } catch (const std::future_error& e) {                                                     \
            EXPECT_EQ(e.code(), std::make_error_code(std::future_errc::no_state)) << #statement;   \
        } catch (...) {                                                                            \
            ADD_FAILURE() << #statement << ": not a std::future_error";                            \
        }                                                                                          \
    } while (false)

inline constexpr const char* k_empty_callable = "empty callable";
inline constexpr const char* k_closed = "cannot submit work after shutdown() has begun";

inline int three() {
    return 3;
}

// Thrown by tasks: exceptions that are not std::exceptions.
struct custom_failure {
    int code;
};

// Every test body runs under the watchdog. (The fixtures are shared by the three files, so they
// are not in an anonymous namespace: GoogleTest requires one fixture type per test suite.)
class misuse_test : public fj_test::guarded_test {};
// Rows where the worker count matters (who runs what, stealing, helping): 1..4 workers.
class misuse_workers_test : public fj_test::workers_test {};
// INSTANTIATE_TEST_SUITE_P for misuse_workers_test is in misuse_lifecycle_test.cpp: one
// instantiation covers the TEST_Ps of all three files.

} // namespace fj_test::misuse
