// Storage for a task's outcome: its value (or nothing, for void) or the exception it threw.
// run() is always_inline: it is the body of every join branch and task, and GCC at -O3 otherwise
// leaves it out of line once join's plain path is inlined whole into its caller.
// Written once by the thread that runs the task, read after the completion edge (an acquire of the
// task's completion word) by the joiner, once, or by the copies of a shared_future, any number of
// times and never written again, so it needs no synchronisation of its own.
// A union with a one-byte tag keeps a future's state small (a fork_task of a scalar result and
// a small lambda fits a 64-byte block).
#pragma once

#include "invoke.hpp"

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace fj::detail {

// Converts to the callable's result, so placement-new constructs the value in place from the
// returned prvalue (guaranteed elision: works for types that cannot be moved).
template <class F>
struct invoke_into {
    F& fn;
    operator std::invoke_result_t<F&>() { return detail::invoke(fn); }
};

enum class slot_state : std::uint8_t { empty, value, error };

template <class T>
class result_slot {
public:
    result_slot() noexcept {}
    result_slot(const result_slot&) = delete;
    result_slot& operator=(const result_slot&) = delete;
    ~result_slot() {
        if (m_state == slot_state::value)
            m_value.~T();
        else if (m_state == slot_state::error)
            m_error.~exception_ptr();
    }

    template <class F>
    [[gnu::always_inline]] void run(F& fn) noexcept {
        try {
            ::new (static_cast<void*>(std::addressof(m_value))) T(invoke_into<F>{fn});
            m_state = slot_state::value;
        } catch (...) {
            ::new (static_cast<void*>(std::addressof(m_error)))
                std::exception_ptr(std::current_exception());
            m_state = slot_state::error;
        }
    }
    // Stores an error instead of running anything (a cancelled task).
    void set_error(std::exception_ptr e) noexcept {
        ::new (static_cast<void*>(std::addressof(m_error))) std::exception_ptr(std::move(e));
        m_state = slot_state::error;
    }
    bool failed() const noexcept { return m_state == slot_state::error; }
    std::exception_ptr error() const noexcept { return failed() ? m_error : nullptr; }
    // Rethrows the stored exception, else moves the value out.
    T take() {
        if (m_state == slot_state::error)
            std::rethrow_exception(m_error);
        return std::move(m_value);
    }
    // Rethrows the stored exception, else returns the value, which stays in the slot. Writes
    // nothing, so the copies of a shared_future may call it from any number of threads at once.
    const T& read() const {
        if (m_state == slot_state::error)
            std::rethrow_exception(m_error);
        return m_value;
    }

private:
    union {
        T m_value;
        std::exception_ptr m_error;
    };
    slot_state m_state = slot_state::empty;
};

template <class T>
class result_slot<T&> {
public:
    template <class F>
    [[gnu::always_inline]] void run(F& fn) noexcept {
        try {
            m_ptr = std::addressof(detail::invoke(fn));
        } catch (...) {
            m_error = std::current_exception();
        }
    }
    void set_error(std::exception_ptr e) noexcept { m_error = std::move(e); }
    bool failed() const noexcept { return m_error != nullptr; }
    std::exception_ptr error() const noexcept { return m_error; }
    T& take() {
        if (m_error)
            std::rethrow_exception(m_error);
        return *m_ptr;
    }
    T& read() const {
        if (m_error)
            std::rethrow_exception(m_error);
        return *m_ptr;
    }

private:
    T* m_ptr = nullptr;
    std::exception_ptr m_error;
};

template <>
class result_slot<void> {
public:
    template <class F>
    [[gnu::always_inline]] void run(F& fn) noexcept {
        try {
            detail::invoke(fn);
        } catch (...) {
            m_error = std::current_exception();
        }
    }
    void set_error(std::exception_ptr e) noexcept { m_error = std::move(e); }
    bool failed() const noexcept { return m_error != nullptr; }
    std::exception_ptr error() const noexcept { return m_error; }
    void take() {
        if (m_error)
            std::rethrow_exception(m_error);
    }
    void read() const {
        if (m_error)
            std::rethrow_exception(m_error);
    }

private:
    std::exception_ptr m_error;
};

} // namespace fj::detail
