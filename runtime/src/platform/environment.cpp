// The environment variables the runtime reads, all of them, each validated here (the table in
// docs/api.md#environment-variables lists them). Each is read when it is needed, not cached
// (except FJ_SYMMETRIC_BARRIER, read once with the barrier's registration), so a scheduler made
// after the variable changes follows it.
#include "platform/environment.hpp"

#include <cstdlib>
#include <string>

#include <forkjoin/errors.hpp>
#include <forkjoin/options.hpp>

namespace fj::detail {

namespace {

// The variable's value, or null when it is unset.
const char* read(const char* name) noexcept {
    return std::getenv(name);
}

} // namespace

std::size_t parse_worker_count(const char* text) {
    const std::string value = text;
    const auto reject = [&] {
        throw_invalid_argument("FJ_WORKERS='" + value +
                               "' is not a worker count: use a whole number from 1 to " +
                               std::to_string(scheduler_options::max_workers) +
                               ", or unset it to use one worker per available CPU");
    };
    if (value.empty() || value.size() > 9)
        reject();
    std::size_t n = 0;
    for (char c : value) {
        if (c < '0' || c > '9')
            reject();
        n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    if (n == 0 || n > scheduler_options::max_workers)
        reject();
    return n;
}

std::size_t environment_worker_count() {
    const char* env = read("FJ_WORKERS");
    return env != nullptr ? parse_worker_count(env) : 0;
}

bool parking_enabled(bool configured) {
    const char* env = read("FJ_PARKING");
    if (env == nullptr || *env == '\0')
        return configured;
    const std::string value = env;
    if (value == "0")
        return false;
    if (value == "1")
        return true;
    throw std::invalid_argument("FJ_PARKING='" + value +
                                "' is not valid: use 1 to park waiting tasks on fibers, 0 to "
                                "help while waiting, or unset it for the scheduler's option");
}

std::string environment_trace_file() {
    const char* env = read("FJ_TRACE");
    return env != nullptr ? std::string(env) : std::string();
}

bool profile_whole_run(bool configured) {
    const char* env = read("FJ_PROFILE");
    if (env == nullptr || *env == '\0')
        return configured;
    const std::string value = env;
    if (value == "0" || value == "1")
        return value == "1";
    throw std::invalid_argument("FJ_PROFILE='" + value +
                                "' is not valid: use 1 to profile the whole run (work, span and "
                                "parallelism printed at shutdown), 0 not to, or unset it");
}

bool symmetric_barrier_forced() noexcept {
    const char* env = read("FJ_SYMMETRIC_BARRIER");
    return env != nullptr && env[0] == '1';
}

} // namespace fj::detail
