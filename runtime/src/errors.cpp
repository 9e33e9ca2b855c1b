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

} // namespace fj::detail
