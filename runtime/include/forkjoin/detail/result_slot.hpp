// Storage for a task's outcome: its value (or nothing, for void) or the exception it threw.
// Written once by the thread that runs the task, read once by the joiner after the completion
// edge (an acquire of the task's completion word), so it needs no synchronisation of its own.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace fj::detail {

// Converts to the callable's result, so optional::emplace constructs the value in place from the
// returned prvalue (guaranteed elision: works for types that cannot be moved).
template <class F>
struct invoke_into {
    F& fn;
    operator std::invoke_result_t<F&>() { return std::invoke(fn); }
};

template <class T>
class result_slot {
public:
    template <class F>
    void run(F& fn) noexcept {
        try {
            m_value.emplace(invoke_into<F>{fn});
        } catch (...) {
            m_error = std::current_exception();
        }
    }
    bool failed() const noexcept { return m_error != nullptr; }
    std::exception_ptr error() const noexcept { return m_error; }
    // Rethrows the stored exception, else moves the value out.
    T take() {
        if (m_error) std::rethrow_exception(m_error);
        return std::move(*m_value);
    }

private:
    std::optional<T> m_value;
    std::exception_ptr m_error;
};

template <class T>
class result_slot<T&> {
public:
    template <class F>
    void run(F& fn) noexcept {
        try {
            m_ptr = std::addressof(std::invoke(fn));
        } catch (...) {
            m_error = std::current_exception();
        }
    }
    bool failed() const noexcept { return m_error != nullptr; }
    std::exception_ptr error() const noexcept { return m_error; }
    T& take() {
        if (m_error) std::rethrow_exception(m_error);
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
    void run(F& fn) noexcept {
        try {
            std::invoke(fn);
        } catch (...) {
            m_error = std::current_exception();
        }
    }
    bool failed() const noexcept { return m_error != nullptr; }
    std::exception_ptr error() const noexcept { return m_error; }
    void take() {
        if (m_error) std::rethrow_exception(m_error);
    }

private:
    std::exception_ptr m_error;
};

} // namespace fj::detail
