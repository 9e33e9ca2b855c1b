// Errors the runtime reports. Misuse of a future reuses std::future_error(no_state); everything
// else is one of the standard exception types below, thrown from one out-of-line helper each so
// messages are uniform and the throwing code stays off the inline fast paths. The std::future_error
// helpers take no std::future_errc, so that this header, which most others include, need not
// include <future>.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace fj {

// Thrown by submit()/fork() from outside the pool after shutdown() has begun.
class scheduler_closed : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A computation that a cancellation ended before it finished: a std::stop_token's stop request
// (the algorithms, fj::task_group, fj::async with a token), or future::cancel() (task_cancelled
// below). One catch clause covers every way work can be cancelled.
class operation_cancelled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown by future::get() (and propagated through then() / when_all) when future::cancel() stopped
// the task before it started.
class task_cancelled : public operation_cancelled {
public:
    using operation_cancelled::operation_cancelled;
};

// Thrown by ~task_group() when tasks were run on the group and no wait() followed: the group
// cancelled what had not started and waited for the rest first (nothing outlives it).
class missing_wait : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

// Thrown by fj::channel's send() on a closed channel (including a sender that was waiting when
// close() was called), and by a second close(): as Go panics, a program error.
class channel_closed : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace detail {
[[noreturn]] void throw_invalid_argument(const std::string& message);
[[noreturn]] void throw_logic_error(const std::string& message);
[[noreturn]] void throw_scheduler_closed();
[[noreturn]] void throw_no_state();
// Promise misuse, as std::promise: std::future_error(future_already_retrieved) and
// std::future_error(promise_already_satisfied).
[[noreturn]] void throw_future_already_retrieved();
[[noreturn]] void throw_promise_already_satisfied();
// std::future_error(broken_promise), what a promise destroyed without a value leaves.
std::exception_ptr broken_promise_error() noexcept;
[[noreturn]] void throw_task_cancelled();
// `who` names the call a stop request ended ("fj::parallel_for", ...).
[[noreturn]] void throw_operation_cancelled(const char* who);
std::exception_ptr task_cancelled_error() noexcept;
// `what` names the call: "send" or "close".
[[noreturn]] void throw_channel_closed(const char* what);
} // namespace detail

} // namespace fj
