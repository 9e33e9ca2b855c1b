// The out-of-line throw helpers: one place for every error the runtime raises.
#include <future>

#include <forkjoin/errors.hpp>

namespace fj::detail {

void throw_invalid_argument(const std::string& message) {
    throw std::invalid_argument(message);
}

void throw_logic_error(const std::string& message) {
    throw std::logic_error(message);
}

void throw_scheduler_closed() {
    throw scheduler_closed(
        "fj::scheduler: cannot submit work after shutdown() has begun (the scheduler is closed)");
}

void throw_no_state() {
    throw std::future_error(std::future_errc::no_state);
}

void throw_future_already_retrieved() {
    throw std::future_error(std::future_errc::future_already_retrieved);
}

void throw_promise_already_satisfied() {
    throw std::future_error(std::future_errc::promise_already_satisfied);
}

std::exception_ptr broken_promise_error() noexcept {
    return std::make_exception_ptr(std::future_error(std::future_errc::broken_promise));
}

namespace {
constexpr const char* k_cancelled_message =
    "fj::future: the task was cancelled (future::cancel()) before it started";
}

void throw_task_cancelled() {
    throw task_cancelled(k_cancelled_message);
}

void throw_operation_cancelled(const char* who) {
    throw operation_cancelled(std::string(who) +
                              ": stopped by a stop request (std::stop_token) before it finished");
}

std::exception_ptr task_cancelled_error() noexcept {
    try {
        throw task_cancelled(k_cancelled_message);
    } catch (...) {
        return std::current_exception(); // task_cancelled, or bad_alloc if even that failed
    }
}

void throw_channel_closed(const char* what) {
    throw channel_closed(std::string("fj::channel::") + what + ": the channel is closed");
}

} // namespace fj::detail
