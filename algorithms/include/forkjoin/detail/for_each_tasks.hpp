// parallel_for_each over input and forward iterators, and with a feeder: one task per item on an
// fj::task_group, since such a sequence can only be walked, not cut at an offset.
//
// The walk runs as a task of the pool (on a worker it pushes each item's task to its own deque,
// where thieves take the oldest first). Input iterators: each item is copied (or moved, for move
// iterators) into its task, because the iterator's reference may not outlive the next ++.
// Forward iterators: the task holds the iterator and the body gets *it in place. Items added
// through the feeder are moved into tasks of the same group. The group's latitude (task_group.hpp:
// a worker whose deque already holds 64 tasks per worker runs the next one at once) bounds the
// memory a long sequence takes to O(workers) tasks.
#pragma once

#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <stop_token>
#include <type_traits>
#include <utility>

#include <forkjoin/extension.hpp>
#include <forkjoin/feeder.hpp>
#include <forkjoin/scheduler.hpp>
#include <forkjoin/task_group.hpp>

namespace fj::detail {

template <class Fn, class It>
inline constexpr bool wants_feeder =
    std::invocable<Fn&, std::iter_reference_t<It>, feeder<std::iter_value_t<It>>&>;

template <class It, class Fn>
class for_each_tasks final : private feeder<std::iter_value_t<It>> {
public:
    using item_type = std::iter_value_t<It>;

    for_each_tasks(scheduler& sched, const std::stop_token& stop, Fn& fn)
        : feeder<item_type>(this, &add_item), m_group(sched, stop), m_fn(fn) {}

    // Walks [first, last), runs a task per item, waits for all (feeder items included).
    void run(It first, It last) {
        try {
            for (; first != last && !m_group.is_canceling(); ++first) {
                if constexpr (std::forward_iterator<It>)
                    m_group.run([this, first] { call(*first); });
                else
                    m_group.run([this, item = item_type(*first)]() mutable { call(item); });
            }
        } catch (...) { // from the iterator, an item's copy, or run(): stop and wait, then report
            m_group.cancel();
            try {
                m_group.wait();
            } catch (...) {
            }
            throw;
        }
        m_group.wait();
    }

private:
    static void add_item(void* context, item_type&& item) {
        auto* self = static_cast<for_each_tasks*>(context);
        self->m_group.run([self, moved = std::move(item)]() mutable { self->call(moved); });
    }

    template <class Ref>
    void call(Ref&& item) {
        feeder<item_type>& more = *this;
        if constexpr (std::invocable<Fn&, Ref&&, feeder<item_type>&>)
            ext::invoke(m_fn, std::forward<Ref>(item), more);
        else
            ext::invoke(m_fn, std::forward<Ref>(item));
    }

    task_group m_group;
    Fn& m_fn;
};

template <std::input_iterator It, class Fn>
void parallel_for_each_tasks(scheduler& sched, It first, It last, const std::stop_token& stop,
                             Fn& fn) {
    ext::check_callable(fn);
    auto walk = [&] {
        for_each_tasks<It, Fn> tasks(sched, stop, fn);
        tasks.run(std::move(first), std::move(last));
    };
    if (sched.on_worker_thread())
        walk();
    else
        sched.submit(walk).get(); // the walk is a task of the pool, as the loops are
}

} // namespace fj::detail
