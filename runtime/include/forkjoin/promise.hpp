// fj::promise<T>: the producing end of an fj::future that no task computes (std::promise's shape).
//
//   fj::promise<int> p;
//   fj::future<int> f = p.get_future();  // once
//   std::thread([&p] { p.set_value(42); }).join();
//   f.get();                             // 42; inside a task, waiting parks it like any future
//
// - set_value(v) / set_exception(e) make the future ready, once; a second call throws
//   std::future_error(promise_already_satisfied), a second get_future()
//   std::future_error(future_already_retrieved), and both throw no_state on a moved-from promise.
// - A promise destroyed without a value makes get() throw std::future_error(broken_promise).
// - T may be a value, a reference (T&) or void. The future is an ordinary fj::future: get(),
//   wait(), wait_for(), then(), when_all / when_any all work; cancel() returns false (a promise's
//   value is not a task that can be kept from starting).
// - A continuation (then) of a promise's future runs on the pool of the thread that set the value,
//   or on the default scheduler when that thread is outside every pool.
// - Thread safety as std::promise: one thread sets the value; the future may be waited on by
//   another.
#pragma once

#include "detail/completion.hpp"
#include "detail/future_state.hpp"
#include "errors.hpp"
#include "future.hpp"

#include <exception>
#include <type_traits>
#include <utility>

namespace fj {

namespace detail {

// A future's state that a promise fills. Heap-allocated: it lives until both the promise and the
// future are done with it (completion.hpp's detach protocol, with the promise as the producer).
template <class T>
struct promise_state final : future_state<T> {
    promise_state() noexcept {
        this->m_manage = &destroy_only<T, &destroy_impl>;
        // Started from the outset: a promise's value cannot be cancelled away (cancel() says
        // false), like a task that is already running.
        const bool started = this->m_completion.try_start(this->m_start);
        (void)started; // nobody else knows the state yet: always true
    }
    static void destroy_impl(future_state<T>* s) noexcept { delete static_cast<promise_state*>(s); }
};

} // namespace detail

template <class T>
class promise {
    struct no_value {}; // stands in for a parameter type that T cannot have (void, T&)
    using value_type = std::conditional_t<std::is_void_v<T> || std::is_reference_v<T>, no_value, T>;
    using reference_type = std::conditional_t<std::is_reference_v<T>, T, no_value&>;

public:
    promise() : m_state(new detail::promise_state<T>) {}
    promise(promise&& other) noexcept
        : m_state(std::exchange(other.m_state, nullptr)),
          m_retrieved(std::exchange(other.m_retrieved, false)),
          m_satisfied(std::exchange(other.m_satisfied, false)) {}
    promise& operator=(promise&& other) noexcept {
        if (this != &other) {
            abandon();
            m_state = std::exchange(other.m_state, nullptr);
            m_retrieved = std::exchange(other.m_retrieved, false);
            m_satisfied = std::exchange(other.m_satisfied, false);
        }
        return *this;
    }
    promise(const promise&) = delete;
    promise& operator=(const promise&) = delete;
    ~promise() { abandon(); }

    void swap(promise& other) noexcept {
        std::swap(m_state, other.m_state);
        std::swap(m_retrieved, other.m_retrieved);
        std::swap(m_satisfied, other.m_satisfied);
    }

    // The future of this promise's value; once.
    future<T> get_future() {
        if (m_retrieved)
            detail::throw_future_already_retrieved();
        check();
        m_retrieved = true;
        future<T> f = detail::future_access::make<T>(m_state);
        if (m_satisfied) // the value is in and published: the future owns the state from now on
            m_state = nullptr;
        return f;
    }

    void set_value(const value_type& value) requires(!std::is_void_v<T> &&
                                                     !std::is_reference_v<T>) {
        satisfy([&]() -> T { return value; });
    }
    void set_value(value_type&& value) requires(!std::is_void_v<T> && !std::is_reference_v<T>) {
        satisfy([&]() -> T { return std::move(value); });
    }
    void set_value(reference_type value) requires std::is_reference_v<T> {
        satisfy([&]() -> T { return value; });
    }
    void set_value() requires std::is_void_v<T> {
        satisfy([] {});
    }

    void set_exception(std::exception_ptr error) {
        if (error == nullptr)
            detail::throw_invalid_argument(
                "fj::promise::set_exception: a null std::exception_ptr (pass the exception to "
                "report, e.g. std::current_exception() inside a catch block)");
        start_satisfying();
        m_state->m_result.set_error(std::move(error));
        publish();
    }

private:
    void check() const {
        if (m_state == nullptr)
            detail::throw_no_state();
    }

    void start_satisfying() const {
        if (m_satisfied)
            detail::throw_promise_already_satisfied();
        check();
    }

    // Stores what make() returns and makes the future ready. The value is built first, on the
    // caller's stack: if that throws (a copy constructor), the promise stays unsatisfied and the
    // exception reaches the caller, as with std::promise.
    template <class Make>
    void satisfy(Make&& make) {
        start_satisfying();
        if constexpr (std::is_void_v<T> || std::is_reference_v<T>) {
            m_state->m_result.run(make); // builds nothing: cannot throw
        } else {
            T value = make();
            auto move_in = [&]() -> T { return std::move(value); };
            m_state->m_result.run(move_in); // a move constructor that throws: stored as the error
        }
        publish();
    }

    // The result is stored: make the future ready (finish()'s release publishes it, and wakes a
    // waiter). The promise owns the state until a future is made, then the future does (freed
    // here if dropped unread). Nothing of *this is touched after finish(): the waiter may free it.
    void publish() noexcept {
        m_satisfied = true;
        const bool retrieved = m_retrieved;
        detail::future_state<T>* const s = retrieved ? std::exchange(m_state, nullptr) : m_state;
        if (s->m_completion.finish() && retrieved) // true: the future was dropped unread
            s->destroy();
    }

    // The promise goes away. Without a future, the state is ours alone; with one and no value
    // yet, the future becomes ready with broken_promise.
    void abandon() noexcept {
        detail::future_state<T>* s = std::exchange(m_state, nullptr);
        if (s == nullptr)
            return; // moved from, or satisfied with its future made
        if (!m_retrieved) {
            s->destroy();
            return;
        }
        s->m_result.set_error(detail::broken_promise_error());
        if (s->m_completion.finish())
            s->destroy();
    }

    detail::future_state<T>* m_state = nullptr; // ours while no future owns it (see publish())
    bool m_retrieved = false;                   // get_future() was called
    bool m_satisfied = false;                   // a value or an exception was set
};

template <class T>
void swap(promise<T>& a, promise<T>& b) noexcept {
    a.swap(b);
}

} // namespace fj
