// Bad input is rejected where it enters, with std::invalid_argument and a message naming it:
// empty callables, impossible options, and malformed FJ_WORKERS values. The scheduler stays
// usable after a rejected call.
#include "platform/environment.hpp" // parse_worker_count (not installed)
#include "support.hpp"

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

namespace {

template <class F>
std::string invalid_argument_message(F&& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("wrong exception type: ") + e.what();
    }
    return "no exception";
}

int plain_function() {
    return 3;
}

class bad_input_test : public fj_test::workers_test {};

// A null function pointer is rejected by submit, fork, join (either branch) and async, and the
// scheduler keeps working.
TEST_P(bad_input_test, NullFunctionPointerRejected) {
    fj::scheduler sched(workers());
    int (*null_fn)() = nullptr;
    EXPECT_THROW(sched.submit(null_fn), std::invalid_argument);
    EXPECT_THROW(sched.fork(null_fn), std::invalid_argument);
    EXPECT_THROW(fj::async(sched, null_fn), std::invalid_argument);
    EXPECT_THROW(sched.join(null_fn, plain_function), std::invalid_argument);
    EXPECT_THROW(sched.join(plain_function, null_fn), std::invalid_argument);
    // The same from inside a task (the fork/join fast paths).
    auto inside = sched.submit([&] {
        int rejected = 0;
        try {
            fj::fork(null_fn);
        } catch (const std::invalid_argument&) {
            ++rejected;
        }
        try {
            fj::join(null_fn, plain_function);
        } catch (const std::invalid_argument&) {
            ++rejected;
        }
        try {
            fj::join(plain_function, null_fn);
        } catch (const std::invalid_argument&) {
            ++rejected;
        }
        return rejected;
    });
    EXPECT_EQ(fj_test::get_or(inside, -1), 3);
    // A valid function pointer works.
    auto ok = sched.submit(&plain_function);
    EXPECT_EQ(fj_test::get_or(ok, -1), 3);
}

// An empty std::function is rejected the same way; a non-empty one runs.
TEST_P(bad_input_test, EmptyStdFunctionRejected) {
    fj::scheduler sched(workers());
    std::function<int()> empty;
    std::function<void()> empty_void;
    EXPECT_THROW(sched.submit(empty), std::invalid_argument);
    EXPECT_THROW(sched.fork(empty_void), std::invalid_argument);
    EXPECT_THROW(sched.join(empty, [] { return 1; }), std::invalid_argument);
    const std::string message = invalid_argument_message([&] { sched.submit(empty); });
    EXPECT_NE(message.find("empty"), std::string::npos) << message;
    std::function<int()> full = [] { return 4; };
    auto f = sched.submit(full);
    EXPECT_EQ(fj_test::get_or(f, -1), 4);
}

INSTANTIATE_TEST_SUITE_P(Workers, bad_input_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

class bad_options_test : public fj_test::guarded_test {};

// More than max_workers (4096) workers is rejected, by count and by options, naming the limit.
TEST_F(bad_options_test, TooManyWorkersRejected) {
    EXPECT_EQ(fj::scheduler_options::max_workers, 4096u);
    EXPECT_THROW(fj::scheduler(std::size_t{4097}), std::invalid_argument);
    fj::scheduler_options o;
    o.workers = 1'000'000;
    const std::string message = invalid_argument_message([&] { fj::scheduler s(o); });
    EXPECT_NE(message.find("4096"), std::string::npos) << message;
}

// Impossible option values are rejected: a stack below 64 KiB, a negative spin, a deque capacity
// of 0 or above 2^30.
TEST_F(bad_options_test, InvalidOptionValuesRejected) {
    const auto rejects = [](auto mutate) {
        fj::scheduler_options o;
        o.workers = 1;
        mutate(o);
        return invalid_argument_message([&] { fj::scheduler s(o); });
    };
    EXPECT_NE(rejects([](auto& o) { o.worker_stack_size = 1024; }).find("worker_stack_size"),
              std::string::npos);
    EXPECT_NE(rejects([](auto& o) {
                  o.spin_before_sleep = std::chrono::microseconds(-1);
              }).find("spin_before_sleep"),
              std::string::npos);
    EXPECT_NE(rejects([](auto& o) {
                  o.spin_before_sleep = std::chrono::microseconds::max();
              }).find("spin_before_sleep"),
              std::string::npos);
    EXPECT_NE(rejects([](auto& o) { o.initial_deque_capacity = 0; }).find("initial_deque_capacity"),
              std::string::npos);
    EXPECT_NE(rejects([](auto& o) {
                  o.initial_deque_capacity = (std::size_t{1} << 20) + 1;
              }).find("initial_deque_capacity"),
              std::string::npos);
}

// Malformed FJ_WORKERS values make a default-sized scheduler throw std::invalid_argument whose
// message quotes the value; explicit worker counts ignore FJ_WORKERS.
class bad_env_test : public ::testing::TestWithParam<const char*> {
    fj_test::watchdog m_dog{fj_test::current_test_name()};
};

TEST_P(bad_env_test, DefaultSizedSchedulerRejectsValue) {
    const char* value = GetParam();
    fj_test::scoped_env env("FJ_WORKERS", value);
    const std::string message = invalid_argument_message([] { fj::scheduler s; });
    EXPECT_NE(message.find(std::string("'") + value + "'"), std::string::npos) << message;
    EXPECT_NE(invalid_argument_message([] { fj::scheduler s(std::size_t{0}); }).find("FJ_WORKERS"),
              std::string::npos);
    EXPECT_THROW((void)fj::detail::parse_worker_count(value), std::invalid_argument);
    fj::scheduler explicit_count(2); // an explicit count does not read FJ_WORKERS
    EXPECT_EQ(explicit_count.worker_count(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Values, bad_env_test,
                         ::testing::Values("abc", "-1", "0", "99999999", "", " 4", "4 ", "4097",
                                           "1e3", "+2", "12345678901234567890"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             return "case_" + std::to_string(info.index);
                         });

// parse_worker_count accepts every whole number from 1 to 4096.
TEST_F(bad_options_test, ParseAcceptsTheValidRange) {
    EXPECT_EQ(fj::detail::parse_worker_count("1"), 1u);
    EXPECT_EQ(fj::detail::parse_worker_count("4096"), 4096u);
    EXPECT_EQ(fj::detail::parse_worker_count("64"), 64u);
}

} // namespace
