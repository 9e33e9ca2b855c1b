// parallel_for_each over input and forward iterators, and with a feeder: one task per item on an
// fj::task_group, since such a sequence can only be walked, not cut at an offset.
//
// The walk runs as a task of the pool (on a worker it pushes each item's task to its own deque,
// where thieves take the oldest first). Input iterators: each item is copied (or moved, for move
// iterators) into its task, because the iterator's reference may not outlive the next ++.
// Forward iterators: the task holds the iterator and the body gets *it in place. Items added
// through the feeder are moved into tasks of the same group.
//
// Memory stays O(workers) however long the sequence: once 64 of the walk's items per worker are
// queued or running, the walker helps (reschedule_until) until half of them have finished, then
// walks on. task_group::run never runs an item in place, so this is where the walk pauses: between
// two increments of the iterator, holding nothing of the caller's.
#pragma once

#include <atomic>
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
        : feeder<item_type>(this, &add_item), m_sched(sched), m_group(sched, stop), m_fn(fn),
          m_walk_ahead(k_walk_ahead_per_worker * sched.worker_count()) {}

    // Walks [first, last), runs a task per item, waits for all (feeder items included).
    void run(It first, It last) {
        try {
            for (; first != last && !m_group.is_canceling(); ++first) {
                if (m_walked.load(std::memory_order_relaxed) >= m_walk_ahead) [[unlikely]]
                    catch_up();
                if constexpr (std::forward_iterator<It>)
                    m_group.run([this, first, t = ticket(m_walked)] { call(*first); });
                else
                    m_group.run([this, item = item_type(*first), t = ticket(m_walked)]() mutable {
                        call(item);
                    });
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
    static constexpr std::size_t k_walk_ahead_per_worker = 64;

    // One walked item that has not finished: counted when its task is made, uncounted when the
    // task's callable is destroyed (after it ran, or unrun when the group is cancelled or run()
    // throws). relaxed: the count only paces the walker; it publishes nothing.
    class ticket {
    public:
        explicit ticket(std::atomic<std::size_t>& count) noexcept : m_count(&count) {
            count.fetch_add(1, std::memory_order_relaxed);
        }
        ticket(ticket&& other) noexcept : m_count(std::exchange(other.m_count, nullptr)) {}
        ticket(const ticket&) = delete;
        ticket& operator=(const ticket&) = delete;
        ticket& operator=(ticket&&) = delete;
        ~ticket() {
            if (m_count != nullptr)
                m_count->fetch_sub(1, std::memory_order_relaxed);
        }

    private:
        std::atomic<std::size_t>* m_count;
    };

    // Runs queued work until half of the walk's items in flight have finished (or the group is
    // cancelled: its queued items are then skipped and uncounted as they are popped).
    void catch_up() {
        const std::size_t low = m_walk_ahead / 2;
        m_sched.reschedule_until([this, low] {
            return m_walked.load(std::memory_order_relaxed) <= low || m_group.is_canceling();
        });
    }

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

    scheduler& m_sched;
    task_group m_group;
    Fn& m_fn;
    const std::size_t m_walk_ahead;       // the walk's items in flight before it helps
    std::atomic<std::size_t> m_walked{0}; // walked items queued or running (tickets alive)
};

template <std::input_iterator It, class Fn>
void parallel_for_each_tasks(scheduler& sched, It first, It last, const std::stop_token& stop,
                             Fn& fn) {
    ext::check_callable(fn);
    auto walk = [&] {
        for_each_tasks<It, Fn> tasks(sched, stop, fn);
        tasks.run(std::move(first), std::move(last));
    };
    sched.execute(walk); // the walk is a task of the pool, as the loops are
}

} // namespace fj::detail
