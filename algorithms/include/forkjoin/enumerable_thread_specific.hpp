// fj::enumerable_thread_specific<T>: one T per thread that asks for one, created lazily, and a way
// to visit them all afterwards (oneTBB's enumerable_thread_specific).
//
//   fj::enumerable_thread_specific<std::vector<int>> hits;
//   fj::parallel_for(0, n, [&](int i) { if (keep(i)) hits.local().push_back(i); });
//   for (const std::vector<int>& part : hits) ...;          // every thread's part
//   long total = counts.combine(std::plus<>{});            // or fold them
//
// local() returns the calling thread's element, creating it on the thread's first call (from the
// exemplar, the initializer function, or T()). The first call on a thread takes a lock owned by
// this container (and, once per thread, a process-wide one that hands out thread numbers); every
// later call is two loads and no lock (detail/per_thread_table.hpp). Workers of any pool and
// threads outside every pool both work. Elements stay at the same address until clear() or the
// destructor.
//
// "Local" means local to the THREAD, not to the task. A task that waits (future::get, fj::join,
// task_group::wait, reschedule_until) may park and resume on another worker thread
// (docs/design/parking.md). After a wait:
//   * call local() again: it returns the element of the thread the task now runs on;
//   * never keep a reference from before the wait: it stays valid (it still points at the old
//     thread's element), but that element now belongs to whatever runs on the old thread, so
//     using it is a data race.
// A task that does not wait never changes thread. This is the rule oneTBB states for its own
// waits, and the one docs/algorithms.md#per-thread-storage explains with an example.
//
// A thread's number is reused after the thread exits, so a new thread may get the element a dead
// thread left (local(exists) then says true); the element is never shared by two live threads.
//
// Thread safety: local() from any number of threads at once. size(), begin()/end(), combine() and
// combine_each() may run while other threads call local() (they see the elements created so far),
// but reading an element while its thread still updates it is the caller's race: visit the
// elements after the parallel work has finished. clear() and the destructor must not overlap any
// other call. Not copyable or movable (elements are at stable addresses).
//
// combine(op) folds the elements in an unspecified order (the threads that created them decide
// it): op must be associative and commutative for a reproducible result, and floating-point sums
// may differ in the last bits from run to run (use fj::parallel_reduce for a deterministic one).
#pragma once

#include "detail/per_thread_table.hpp"

#include <concepts>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <forkjoin/extension.hpp>

namespace fj {

template <class T>
class enumerable_thread_specific {
    using table = detail::per_thread_table<T>;

public:
    using value_type = T;
    using reference = T&;
    using const_reference = const T&;
    using size_type = std::size_t;
    using iterator = typename table::template basic_iterator<false>;
    using const_iterator = typename table::template basic_iterator<true>;

    // Elements are value-initialised: T().
    enumerable_thread_specific() requires std::default_initializable<T>
        : m_table(std::make_unique<detail::default_maker<T>>()) {}

    // Elements are copies of `exemplar`.
    explicit enumerable_thread_specific(const T& exemplar) requires std::copy_constructible<T>
        : m_table(std::make_unique<detail::exemplar_maker<T>>(exemplar)) {}
    explicit enumerable_thread_specific(T&& exemplar) requires std::copy_constructible<T>
        : m_table(std::make_unique<detail::exemplar_maker<T>>(std::move(exemplar))) {}

    // Elements are init(), called on the thread that first asks (several threads may call it at
    // once). An empty callable throws std::invalid_argument here.
    template <class Init>
    requires std::invocable < const std::decay_t<Init>
    & > &&std::same_as<std::invoke_result_t<const std::decay_t<Init>&>, T> &&
        (!std::convertible_to<Init, T>)explicit enumerable_thread_specific(Init&& init)
        : m_table(make_function_maker(std::forward<Init>(init))) {}

    enumerable_thread_specific(const enumerable_thread_specific&) = delete;
    enumerable_thread_specific& operator=(const enumerable_thread_specific&) = delete;

    // The calling thread's element (see the top of this file for what that means across waits).
    T& local() {
        bool exists;
        return m_table.local(exists);
    }
    // The same; `exists` says whether the element was there before this call.
    T& local(bool& exists) { return m_table.local(exists); }

    // How many elements exist.
    std::size_t size() const noexcept { return m_table.size(); }
    bool empty() const noexcept { return size() == 0; }

    // The elements, newest first.
    iterator begin() noexcept { return m_table.begin(); }
    iterator end() noexcept { return m_table.end(); }
    const_iterator begin() const noexcept { return m_table.begin(); }
    const_iterator end() const noexcept { return m_table.end(); }
    const_iterator cbegin() const noexcept { return m_table.begin(); }
    const_iterator cend() const noexcept { return m_table.end(); }

    // op(op(e1, e2), e3)... over the elements (in an unspecified order); with no elements, a
    // fresh element as local() would make it.
    template <class Op>
    requires std::convertible_to<std::invoke_result_t<Op&, const T&, const T&>, T> T combine(Op op)
    const {
        ext::check_callable(op);
        auto it = begin();
        if (it == end())
            return m_table.make_detached();
        T result = *it;
        for (++it; it != end(); ++it)
            result = static_cast<T>(ext::invoke(op, std::as_const(result), *it));
        return result;
    }

    // f(element) for every element.
    template <class F>
    requires std::invocable<F&, T&>
    void combine_each(F f) {
        ext::check_callable(f);
        for (T& element : *this)
            ext::invoke(f, element);
    }
    template <class F>
    requires std::invocable<F&, const T&>
    void combine_each(F f) const {
        ext::check_callable(f);
        for (const T& element : *this)
            ext::invoke(f, element);
    }

    // Destroys every element; the next local() on each thread makes a fresh one. Must not overlap
    // any other call on this container.
    void clear() noexcept { m_table.clear(); }

private:
    template <class Init>
    static std::unique_ptr<detail::element_maker<T>> make_function_maker(Init&& init) {
        ext::check_callable(init);
        return std::make_unique<detail::function_maker<T, std::decay_t<Init>>>(
            std::forward<Init>(init));
    }

    table m_table;
};

} // namespace fj
