// fj::task_scope's count (task_scope.hpp; docs/design/coroutines.md#tasks, step 7): the children
// not yet ended, plus one for the parent while it is not joining. Whoever brings it to zero
// resumes the parent: the last child to end, or the parent's own join. And the election of the
// first child that fails.
#pragma once

#include "atomics.hpp"

#include <atomic>
#include <cstddef>

namespace fj::detail {

template <class Atomics = std_atomics>
class basic_scope_count {
public:
    // The parent spawns a child; or takes back one it could not queue (it never started).
    // relaxed: only the parent adds, and its own share keeps the count above zero; the queue
    // that starts the child publishes what the parent wrote before.
    void add_child() noexcept { m_count.fetch_add(1, std::memory_order_relaxed); }
    void remove_unstarted_child() noexcept { m_count.fetch_sub(1, std::memory_order_relaxed); }

    // The parent's join, before it suspends: true if every child has ended. acquire: pairs with
    // each child's release in child_leaves(), so the parent sees what the children wrote.
    bool all_ended() const noexcept { return m_count.load(std::memory_order_acquire) == 1; }

    // The parent's join takes its share away: true if it must stay suspended (a child is still
    // running; the last one resumes it), false if it was the last. acq_rel: the release
    // publishes what the parent wrote before (the handle the last child resumes); the acquire
    // takes every child's writes when the parent is the last. Once it returns true the parent
    // may already be running again: the caller touches nothing of the scope.
    bool parent_leaves() noexcept { return m_count.fetch_sub(1, std::memory_order_acq_rel) != 1; }

    // A child ends: true for the last one, which resumes the parent. acq_rel: the release
    // publishes this child's writes (and a kept exception) to whoever resumes the parent; the
    // acquire of the last takes the others' (the decrements form one release sequence) and the
    // parent's handle. Past a decrement that is not the last, the scope may be gone.
    bool child_leaves() noexcept { return m_count.fetch_sub(1, std::memory_order_acq_rel) == 1; }

    // The parent, resumed after its join: only its own share is left.
    void rejoin() noexcept { m_count.store(1, std::memory_order_relaxed); }

    // A failing child: true for the first, which keeps its exception. relaxed: the exception is
    // published by that child's child_leaves(), and read by the parent after its join.
    bool elect_first_failure() noexcept {
        return !m_failed.exchange(true, std::memory_order_relaxed);
    }
    // The parent, resumed after its join: whether a child kept an exception; clears the flag.
    bool take_failure() noexcept { return m_failed.exchange(false, std::memory_order_relaxed); }

private:
    typename Atomics::template atomic<std::size_t> m_count{1};
    typename Atomics::template atomic<bool> m_failed{false};
};

using scope_count = basic_scope_count<>;

} // namespace fj::detail
