// fj::task_scope's count (task_scope.hpp; docs/design/coroutines.md#tasks, step 7): a share for
// the parent while it is not joining, less the children that have ended; the join exchanges the
// share for the number of children spawned. Whoever brings it to zero resumes the parent: the
// last child to end, or the parent's own join. And the election of the first child that fails.
#pragma once

#include "atomics.hpp"

#include <atomic>
#include <cstddef>
#include <limits>

namespace fj::detail {

template <class Atomics = std_atomics>
class basic_scope_count {
public:
    // The parent's share: larger than any number of children, so that no child's end can bring
    // the count to zero before the parent's join has taken the share away. The children are not
    // added one by one: the parent counts them in a field of its own, and its join subtracts the
    // share less that number in one RMW. So a spawn makes no RMW, and a child's end and the join
    // one each.
    static constexpr std::size_t k_parent_share = std::size_t{1}
                                                  << (std::numeric_limits<std::size_t>::digits - 2);

    // The parent spawns a child; or takes back one it could not queue (it never started). The
    // queue that starts the child publishes what the parent wrote before.
    void add_child() noexcept { ++m_spawned; }
    void remove_unstarted_child() noexcept { --m_spawned; }

    // The parent's join, before it suspends: true if every child has ended. acquire: pairs with
    // each child's release in child_leaves(), so the parent sees what the children wrote.
    bool all_ended() const noexcept {
        return m_count.load(std::memory_order_acquire) == k_parent_share - m_spawned;
    }

    // The parent's join takes its share away and counts its children in: true if it must stay
    // suspended (a child is still running; the last one resumes it), false if every child had
    // ended. acq_rel: the release publishes what the parent wrote before (the handle the last
    // child resumes); the acquire takes every child's writes when the parent is the last. Once it
    // returns true the parent may already be running again: the caller touches nothing of the
    // scope.
    bool parent_leaves() noexcept {
        const std::size_t share_less_children = k_parent_share - m_spawned;
        return m_count.fetch_sub(share_less_children, std::memory_order_acq_rel) !=
               share_less_children;
    }

    // A child ends: true for the last one, which resumes the parent. acq_rel: the release
    // publishes this child's writes (and a kept exception) to whoever resumes the parent; the
    // acquire of the last takes the others' (the decrements form one release sequence) and the
    // parent's handle. Past a decrement that is not the last, the scope may be gone.
    bool child_leaves() noexcept { return m_count.fetch_sub(1, std::memory_order_acq_rel) == 1; }

    // The parent, resumed after its join: only its own share is left.
    void rejoin() noexcept {
        m_count.store(k_parent_share, std::memory_order_relaxed);
        m_spawned = 0;
    }

    // A failing child: true for the first, which keeps its exception. relaxed: the exception is
    // published by that child's child_leaves(), and read by the parent after its join.
    bool elect_first_failure() noexcept {
        return !m_failed.exchange(true, std::memory_order_relaxed);
    }
    // The parent, resumed after its join: whether a child kept an exception; clears the flag.
    // relaxed: the join took every child's writes, this flag's among them; no child runs now.
    bool take_failure() noexcept {
        if (!m_failed.load(std::memory_order_relaxed))
            return false;
        m_failed.store(false, std::memory_order_relaxed);
        return true;
    }

private:
    typename Atomics::template atomic<std::size_t> m_count{k_parent_share};
    typename Atomics::template atomic<bool> m_failed{false};
    std::size_t m_spawned = 0; // the parent's: children spawned since its last join
};

using scope_count = basic_scope_count<>;

} // namespace fj::detail
