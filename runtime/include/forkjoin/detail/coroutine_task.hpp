// fj::task's machinery (forkjoin/task.hpp; docs/design/coroutines.md#tasks): the promise types,
// the resumption task, frame memory, the root that turns a task into a future, the join of
// two tasks, and the scope of any number of them.
#pragma once

#include "../future.hpp"
#include "../promise.hpp"
#include "branch_join.hpp"
#include "pool_core.hpp"
#include "task.hpp"
#include "worker.hpp"

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace fj {
template <class T>
class task;
} // namespace fj

namespace fj::detail {

// A coroutine resumption queued as a task: running it resumes the coroutine, which may end and
// free the frame this record lives in, so resuming is the last touch.
struct resume_task : task {
    std::coroutine_handle<> handle;
    resume_task() noexcept { m_run = &run; }
    static void run(task* t) noexcept { static_cast<resume_task*>(t)->handle.resume(); }
};

// Queues r where a fork would go: the calling worker's deque (stolen by idle workers), or, off a
// worker of `p`, p's injection queue. Throws what inject() throws (closed), before queuing.
inline void queue_resumption(pool_core& p, resume_task& r) {
    if (worker* w = own_worker(p)) {
        try {
            push_local(p, *w, &r);
            return;
        } catch (const std::bad_alloc&) {
            // the deque could not grow: the injection queue needs no memory
        }
    }
    inject(p, &r);
}

class task_scope_core;

// What lets a coroutine co_await an fj::task: fj::task's own promise, and the root that runs a
// task for a future. Awaiting a task runs it on the awaiting thread (a worker of a pool), so a
// coroutine of another type (an I/O thread's) awaits fj::async(task) instead: a future.
struct awaits_tasks {};

// Coroutine frames come from the worker's block cache (64 to 512 bytes), the heap above.
struct frame_memory {
    static void* operator new(std::size_t size) { return allocate_frame_memory(size); }
    static void operator delete(void* p, std::size_t size) noexcept { free_frame_memory(p, size); }
};

class task_promise_base : public awaits_tasks, public frame_memory {
public:
    std::suspend_always initial_suspend() noexcept { return {}; } // lazy: runs when awaited

    // At the end: resume whoever awaited the task (symmetric transfer, no stack growth). A branch
    // of a join resumes its parent only if it is the last of the two to end, or the second run
    // here after the first (branch_join.hpp).
    struct final_awaiter {
        bool await_ready() noexcept { return false; }
        template <class Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
            task_promise_base& p = self.promise();
            if (p.m_scope != nullptr)
                return end_scope_child(p.m_scope, std::move(p.m_error), self);
            if (p.m_join != nullptr) {
                if (task_promise_base* const second = p.m_sibling;
                    second != nullptr && take_back(second->m_start)) {
                    second->m_join = nullptr; // it ends uncounted: nobody else holds it now
                    return second->m_start.handle;
                }
                // Past a decrement that was not the last, the other end may resume the parent,
                // which destroys this frame: nothing here touches it afterwards.
                if (!p.m_join->end_counted())
                    return std::noop_coroutine();
            }
            return p.m_continuation;
        }
        void await_resume() noexcept {}

        static std::coroutine_handle<> end_scope_child(task_scope_core* scope,
                                                       std::exception_ptr error,
                                                       std::coroutine_handle<> self) noexcept;

        // The first branch's end: whether the second's start was still on top of this worker's
        // deque (the first branch's own forks were joined before it ended), taken back to run here
        // next, without a trip through the worker loop. Putting back what was on top instead
        // cannot throw: the deque has the room it had (and noexcept would terminate).
        static bool take_back(const resume_task& second_start) noexcept {
            worker* const w = current_worker();
            return branch_join::take_back_second(
                w != nullptr ? &w->m_deque : nullptr, static_cast<const task*>(&second_start),
                [w](task* top) noexcept { push_local(*w->m_pool, *w, top); });
        }
    };
    final_awaiter final_suspend() noexcept { return {}; }

    void unhandled_exception() noexcept { m_error = std::current_exception(); }

    void rethrow_if_failed() const {
        if (m_error)
            std::rethrow_exception(m_error);
    }

    std::coroutine_handle<> m_continuation = std::noop_coroutine();
    branch_join* m_join = nullptr;          // for a branch of a join that may end counted
    task_promise_base* m_sibling = nullptr; // for a join's first branch: the second
    std::exception_ptr m_error;
    task_scope_core* m_scope = nullptr; // for a child of a task_scope: its scope
    resume_task m_start; // for a join's second branch or a task_scope's child: its queued start
};

template <class T>
class task_promise final : public task_promise_base {
public:
    fj::task<T> get_return_object() noexcept;

    template <class U>
    void return_value(U&& value) {
        m_value.emplace(std::forward<U>(value));
    }

    T take() {
        rethrow_if_failed();
        return std::move(*m_value);
    }

private:
    std::optional<T> m_value;
};

template <>
class task_promise<void> final : public task_promise_base {
public:
    fj::task<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void take() const { rethrow_if_failed(); }
};

template <class T>
using task_handle = std::coroutine_handle<task_promise<T>>;

// The handle inside an fj::task (task.hpp makes this a friend).
struct task_access {
    template <class T>
    static task_handle<T> release(fj::task<T>& t) noexcept {
        return std::exchange(t.m_handle, {});
    }
};

// Owns a task's frame: destroys it with the owner.
template <class T>
class owned_frame {
public:
    explicit owned_frame(task_handle<T> h) noexcept : m_handle(h) {}
    owned_frame(owned_frame&& o) noexcept : m_handle(std::exchange(o.m_handle, {})) {}
    owned_frame& operator=(owned_frame&&) = delete;
    ~owned_frame() {
        if (m_handle)
            m_handle.destroy();
    }
    task_handle<T> get() const noexcept { return m_handle; }

private:
    task_handle<T> m_handle;
};

// co_await on a task, from a task (or the root): runs it now on this thread (symmetric transfer)
// and gives its value, or rethrows its exception.
template <class T>
class task_awaiter {
public:
    explicit task_awaiter(task_handle<T> h) noexcept : m_frame(h) {}

    bool await_ready() noexcept { return false; }

    template <class Promise>
    requires std::derived_from<Promise, awaits_tasks> std::coroutine_handle<>
    await_suspend(std::coroutine_handle<Promise> parent)
    noexcept {
        m_frame.get().promise().m_continuation = parent;
        return m_frame.get();
    }

    T await_resume() { return m_frame.get().promise().take(); }

private:
    owned_frame<T> m_frame;
};

// --- A task run for a future
// ----------------------------------------------------------------------

// The coroutine that awaits a task and sets a promise: started by a queued resumption, it ends
// by itself (its frame frees itself once it has set the promise).
class root_runner {
public:
    struct promise_type : awaits_tasks, frame_memory {
        root_runner get_return_object() noexcept {
            return root_runner(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); } // the body catches everything
        resume_task start;
    };

    explicit root_runner(std::coroutine_handle<promise_type> h) noexcept : m_handle(h) {}

    // Queues the runner's first resumption on p; on failure (p closed) destroys the runner, which
    // has not started, and rethrows.
    void start_on(pool_core& p) {
        resume_task& start = m_handle.promise().start;
        start.handle = m_handle;
        try {
            queue_resumption(p, start);
        } catch (...) {
            m_handle.destroy();
            throw;
        }
    }

private:
    std::coroutine_handle<promise_type> m_handle;
};

template <class T>
root_runner run_to_promise(fj::task<T> t, fj::promise<T> result) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(t);
            result.set_value();
        } else {
            result.set_value(co_await std::move(t));
        }
    } catch (...) {
        result.set_exception(std::current_exception());
    }
}

template <class T>
fj::future<T> start_task(pool_core& p, fj::task<T>&& t) {
    fj::promise<T> result;
    fj::future<T> f = result.get_future();
    run_to_promise(std::move(t), std::move(result)).start_on(p);
    return f;
}

// --- The join of two tasks -----------------------------------------------------------------------

template <class T>
using join_value_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class A, class B>
class task_join_awaiter {
public:
    task_join_awaiter(task_handle<A> a, task_handle<B> b) noexcept : m_a(a), m_b(b) {}

    bool await_ready() noexcept { return false; }

    // Offers b to thieves (on this worker's deque, like a fork) and runs a on this thread now.
    // a's end runs b next if nobody took it; else whichever branch ends last resumes the parent.
    template <class Promise>
    requires std::derived_from<Promise, awaits_tasks> std::coroutine_handle<>
    await_suspend(std::coroutine_handle<Promise> parent) {
        task_promise_base& a = m_a.get().promise();
        task_promise_base& b = m_b.get().promise();
        a.m_continuation = parent;
        b.m_continuation = parent;
        a.m_join = &m_join;
        b.m_join = &m_join;
        a.m_sibling = &b;
        b.m_start.handle = m_b.get();
        pool_core* p = current_pool();
        // A task runs on a worker of its pool; a coroutine resumed elsewhere (a future completed
        // outside every pool, resumed on the default scheduler's fallback thread) uses that pool.
        queue_resumption(p != nullptr ? *p : current_pool_or_default(), b.m_start);
        return m_a.get();
    }

    std::pair<join_value_t<A>, join_value_t<B>> await_resume() {
        // a's exception first, as fj::join's: the first branch in program order.
        m_a.get().promise().rethrow_if_failed();
        m_b.get().promise().rethrow_if_failed();
        return {value_of(m_a), value_of(m_b)};
    }

private:
    template <class T>
    static join_value_t<T> value_of(const owned_frame<T>& f) {
        if constexpr (std::is_void_v<T>)
            return {};
        else
            return f.get().promise().take();
    }

    // m_join between the frames: with the two handles adjacent here and in the join's argument
    // temporaries, g++ 12 moves both with one 16-byte load, which cannot be forwarded from the
    // two 8-byte stores that just wrote them (a store-forwarding stall on every join).
    owned_frame<A> m_a;
    branch_join m_join;
    owned_frame<B> m_b;
};

} // namespace fj::detail
