// One run of fj::parallel_pipeline: tokens carried through the stages by the tasks of one
// fj::task_group. The protocol, with the argument that no item is lost, order is kept and the
// call neither returns early nor hangs, is docs/design/pipeline.md; the step numbers below are its.
//
// No thread ever waits for a stage. A token that finds a serial stage busy (or, in order, not its
// turn) is parked in that stage's buffer and its task ends; the task that releases the stage
// hands it to the next ready token and starts that token as a new task. The only thing waited for
// is the task group, at the end.
//
// Locks: one short mutex per serial stage (enter and release: a flag, a counter and a buffer), and
// the input stage's, which also guards the count of items in flight (admission and retirement).
// Each is held for a few instructions and never across a user callable. The input stage is serial
// by construction, so its lock orders nothing that is not already ordered.
//
// The run takes its task group and its mutex as template parameters (basic_pipeline_run; the
// pipeline uses pipeline_run, fj::task_group and std::mutex), so that the model test
// (test/model/pipeline_model_test.cpp) runs this code with a group and a mutex of its own.
#pragma once

#include "pipeline_stage.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

#include <forkjoin/errors.hpp>
#include <forkjoin/scheduler.hpp>
#include <forkjoin/task_group.hpp>

namespace fj::detail {

using stage_list = std::vector<std::shared_ptr<pipeline_stage>>;

template <class Group = task_group, class Mutex = std::mutex>
class basic_pipeline_run {
public:
    // `sched` is what the group is made from: an fj::scheduler for fj::task_group.
    template <class Scheduler>
    basic_pipeline_run(Scheduler& sched, std::size_t max_tokens, const stage_list& stages,
                       std::stop_token stop)
        : m_stages(stages), m_max_tokens(max_tokens), m_group(sched), m_stop(std::move(stop)) {
        for (const auto& s : m_stages) {
            m_layout.size = std::max(m_layout.size, s->out_size());
            m_layout.align = std::max(m_layout.align, s->out_align());
        }
        m_serial.resize(m_stages.size());
        for (std::size_t i = 1; i < m_stages.size(); ++i)
            if (m_stages[i]->mode() != filter_mode::parallel)
                m_serial[i] = std::make_unique<serial_stage>(m_stages[i]->mode());
    }

    basic_pipeline_run(const basic_pipeline_run&) = delete;
    basic_pipeline_run& operator=(const basic_pipeline_run&) = delete;

    ~basic_pipeline_run() {
        // Every task has ended (run() waited); what is left is parked tokens and spare ones.
        while (m_free != nullptr)
            pipeline_token::destroy(std::exchange(m_free, m_free->next));
    }

    void run() {
        // A stop request cancels the group: tasks not started are skipped (their tokens die with
        // them) and running ones stop at their next stage boundary.
        std::optional<std::stop_callback<canceller>> on_stop;
        on_stop.emplace(m_stop, canceller{this});
        m_in_flight = 1; // step 1: the first token, admitted before any task exists
        try {
            spawn(token_ptr(pipeline_token::make(m_layout)));
        } catch (...) {
            m_group.wait(); // nothing was queued; ends the group cleanly before unwinding
            throw;
        }
        m_group.wait(); // a stage's exception is rethrown here (the first one)
        on_stop.reset();
        if (m_stop.stop_requested())
            throw_operation_cancelled("fj::parallel_pipeline");
    }

private:
    struct canceller {
        basic_pipeline_run* run;
        void operator()() const noexcept { run->stop_all(); }
    };

    // A failure or a stop: the group skips the tasks not started, and running ones read
    // m_stopping at their next stage boundary.
    void stop_all() noexcept {
        m_stopping.store(true, std::memory_order_relaxed);
        m_group.cancel();
    }

    // relaxed: a hint; a task that misses it runs one more stage, and the group's cancel flag
    // (set with it) keeps tasks not yet started from starting.
    bool stopping() const noexcept { return m_stopping.load(std::memory_order_relaxed); }

    // A serial stage's state, on its own cache line: different stages are entered by different
    // workers at once.
    struct alignas(64) serial_stage {
        explicit serial_stage(filter_mode m) : in_order(m == filter_mode::serial_in_order) {}
        Mutex mutex;
        bool in_order;
        bool busy = false;             // guarded by mutex: a token is inside the stage
        std::size_t next_seq = 0;      // guarded by mutex: in order, the seq whose turn it is
        std::vector<token_ptr> parked; // guarded by mutex: in order, a min-heap by seq
    };

    static bool later(const token_ptr& a, const token_ptr& b) noexcept { return a->seq > b->seq; }

    void spawn(token_ptr t) {
        m_group.run([this, t = std::move(t)]() mutable { drive(std::move(t)); });
    }

    // A task: carries one token as far as it can. Returns when the token is parked, retired, or
    // the run is cancelled; loops back to the input when the token is reused for a new item.
    void drive(token_ptr t) {
        try {
            carry(t);
        } catch (...) {
            stop_all();
            throw; // the group keeps the first exception for wait()
        }
    }

    void carry(token_ptr& t) {
        for (;;) {
            if (t->stage == 0 && !fetch(t))
                return;
            for (; t->stage < m_stages.size(); ++t->stage) {
                if (stopping()) // a failure or a stop: drop the item (step 6)
                    return;
                serial_stage* s = m_serial[t->stage].get();
                if (s != nullptr && !std::exchange(t->holds_stage, false) && !enter(*s, t))
                    return; // parked (step 3)
                m_stages[t->stage]->run(*t, m_flow);
                if (s != nullptr)
                    release(*s); // step 4
            }
            if (!retire(t))
                return;
        }
    }

    // Step 2: the caller holds the input role (at most one task does). Calls the input, then
    // passes the role on: to a new task with a fresh token if another item may be in flight,
    // else to the next task that retires an item.
    bool fetch(token_ptr& t) {
        if (stopping())
            return false;
        m_stages[0]->run(*t, m_flow);
        if (flow_access::stopped(m_flow)) {
            std::lock_guard lock(m_input_mutex);
            --m_in_flight; // this token carries nothing; it is freed by the caller
            return false;  // the role ends with it: the input is never called again
        }
        t->seq = m_next_seq++; // only the role's holder touches it; handovers order it
        t->stage = 1;
        bool admitted = false;
        pipeline_token* spare = nullptr;
        {
            std::lock_guard lock(m_input_mutex);
            if (m_in_flight == m_max_tokens) {
                m_input_idle = true; // step 5 picks the role up
            } else {
                ++m_in_flight;
                admitted = true;
                if (m_free != nullptr)
                    spare = std::exchange(m_free, m_free->next);
            }
        }
        if (admitted) // a fresh token is allocated outside the lock
            spawn(token_ptr(spare != nullptr ? spare : pipeline_token::make(m_layout)));
        return true;
    }

    // Step 3: enter a serial stage, or park the token in its buffer.
    bool enter(serial_stage& s, token_ptr& t) {
        std::lock_guard lock(s.mutex);
        if (!s.busy && (!s.in_order || t->seq == s.next_seq)) {
            s.busy = true;
            return true;
        }
        s.parked.push_back(std::move(t));
        if (s.in_order)
            std::push_heap(s.parked.begin(), s.parked.end(), later);
        return false;
    }

    // Step 4: leave a serial stage; hand it straight to a ready parked token, if there is one.
    void release(serial_stage& s) {
        token_ptr next;
        {
            std::lock_guard lock(s.mutex);
            if (s.in_order) {
                ++s.next_seq;
                if (!s.parked.empty() && s.parked.front()->seq == s.next_seq) {
                    std::pop_heap(s.parked.begin(), s.parked.end(), later);
                    next = std::move(s.parked.back());
                    s.parked.pop_back();
                }
            } else if (!s.parked.empty()) {
                next = std::move(s.parked.back());
                s.parked.pop_back();
            }
            s.busy = next != nullptr;
        }
        if (next != nullptr) {
            next->holds_stage = true;
            spawn(std::move(next));
        }
    }

    // Step 5: the item has left the last stage. The token takes the input role if it is idle
    // (the count stays: the token is admitted again at once), else goes to the free list.
    bool retire(token_ptr& t) {
        t->stage = 0;
        std::lock_guard lock(m_input_mutex);
        if (m_input_idle) {
            m_input_idle = false;
            return true;
        }
        --m_in_flight;
        t->next = m_free;
        m_free = t.release();
        return false;
    }

    const stage_list& m_stages;
    const std::size_t m_max_tokens;
    item_layout m_layout;
    std::vector<std::unique_ptr<serial_stage>> m_serial; // null for parallel stages and the input
    flow_control m_flow; // the input's; only the input role's holder touches it
    std::size_t m_next_seq = 0;

    Mutex m_input_mutex;
    std::size_t m_in_flight = 0;      // guarded: tokens admitted and not retired
    bool m_input_idle = false;        // guarded: the role waits for a retirement
    pipeline_token* m_free = nullptr; // guarded: spare tokens, at most max_tokens in all

    Group m_group; // after the buffers: destroyed first (it has been waited for)
    std::stop_token m_stop;
    // On its own cache line: read before every stage, written only to stop. The group's own
    // flag shares a line with its task count, which every task start and end writes.
    alignas(64) std::atomic<bool> m_stopping{false};
};

using pipeline_run = basic_pipeline_run<>;

} // namespace fj::detail
