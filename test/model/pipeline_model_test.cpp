// The pipeline's run (algorithms/include/forkjoin/detail/pipeline_run.hpp) under Relacy: items go
// through an input, a parallel stage, a serial-in-order stage and a parallel output with at most
// `Tokens` in flight; each passes every stage exactly once, the serial stage sees them in input
// order and one at a time, every payload written by one stage is read by the next without a data
// race, and the call returns only when every item has left the last stage.
// docs/design/pipeline.md#model says what is covered and what is not.
#include "model/model_support.hpp"

#include <cstddef>
#include <memory>
#include <source_location>
#include <stop_token>
#include <utility>

#include <forkjoin/detail/pipeline_run.hpp>

namespace {

using fj::model::relacy_mutex;

// The tasks of one run: a stack under a Relacy mutex that every modelled thread takes tasks from,
// and the count of tasks queued or running. Its lock orders a task's creation before its start,
// and every task's end before wait()'s return, as fj::task_group does; nothing else.
class model_pool {
public:
    struct task {
        virtual ~task() = default;
        virtual void run() = 0;
    };

    void push(task* t) {
        m_mutex.lock($);
        RL_ASSERT(m_size < k_capacity);
        m_tasks[m_size++] = t;
        ++m_pending;
        m_mutex.unlock($);
    }

    // Runs one queued task; false if there was none.
    bool run_one() {
        m_mutex.lock($);
        task* t = m_size == 0 ? nullptr : m_tasks[--m_size];
        m_mutex.unlock($);
        if (t == nullptr)
            return false;
        try {
            t->run();
        } catch (...) {
            RL_ASSERT(false); // no stage throws in these scenarios
        }
        delete t;
        m_mutex.lock($);
        --m_pending;
        m_mutex.unlock($);
        return true;
    }

    bool idle() {
        m_mutex.lock($);
        const bool none = m_pending == 0;
        m_mutex.unlock($);
        return none;
    }

    // The caller's wait: helps with the tasks until none is queued or running.
    void wait() {
        while (!idle())
            if (!run_one())
                rl::yield(1, $);
    }

    // Another modelled thread: runs tasks until the run has returned.
    void work() {
        while (!finished.load(rl::mo_acquire, $))
            if (!run_one())
                rl::yield(1, $);
    }

    rl::atomic<bool> finished{false};

private:
    static constexpr int k_capacity = 16;
    rl::mutex m_mutex;
    task* m_tasks[k_capacity] = {};
    int m_size = 0;    // guarded by m_mutex
    int m_pending = 0; // guarded by m_mutex: tasks queued or running
};

// What the run needs of fj::task_group, over the pool.
class model_group {
public:
    explicit model_group(model_pool& pool) : m_pool(pool) {}

    template <class F>
    void run(F&& f) {
        m_pool.push(new closure<std::decay_t<F>>(std::forward<F>(f)));
    }
    void wait() { m_pool.wait(); }
    void cancel() noexcept { RL_ASSERT(false); } // nothing fails or stops in these scenarios

private:
    template <class F>
    struct closure final : model_pool::task {
        explicit closure(F&& f) : fn(std::move(f)) {}
        void run() override { fn(); }
        F fn;
    };

    model_pool& m_pool;
};

using model_run = fj::detail::basic_pipeline_run<model_group, relacy_mutex>;

constexpr int k_max_items = 3;

// Thread 0 calls the run and helps with its tasks in wait(); the other threads run tasks until it
// returns. `Items` items, `Tokens` tokens; the third stage's mode is `Serial` (serial_in_order in
// the model; the other modes only to show that its checks can fail).
template <int Threads, int Tokens, int Items, fj::filter_mode Serial>
struct pipeline_scenario
    : rl::test_suite<pipeline_scenario<Threads, Tokens, Items, Serial>, Threads> {
    static_assert(Items <= k_max_items);

    model_pool pool;
    rl::var<int> produced;             // the input's count: only the input role's holder
    rl::var<int> payload[k_max_items]; // item i's value, rewritten by each stage
    rl::var<int> next;                 // the serial stage's: the item whose turn it is
    rl::var<int> outputs[k_max_items]; // how often item i reached the output
    int live = 0; // items read and not yet out; not a Relacy variable: bookkeeping only

    void before() {
        produced($) = 0;
        next($) = 0;
        for (int i = 0; i < k_max_items; ++i) {
            payload[i]($) = 0;
            outputs[i]($) = 0;
        }
    }

    void thread(unsigned index) {
        if (index != 0) {
            pool.work();
            return;
        }
        fj::detail::stage_list stages;
        stages.push_back(make_stage<void, int>(fj::filter_mode::serial_in_order,
                                               [this](fj::flow_control& fc) { return input(fc); }));
        stages.push_back(make_stage<int, int>(fj::filter_mode::parallel, [this](int i) {
            RL_ASSERT(payload[i]($) == 10 * i + 1); // the input's write, published to this stage
            payload[i]($) = 10 * i + 2;
            return i;
        }));
        stages.push_back(make_stage<int, int>(Serial, [this](int i) {
            RL_ASSERT(payload[i]($) == 10 * i + 2); // across a park and hand-off, too
            RL_ASSERT(next($) == i);                // in order, one at a time
            next($) = i + 1;
            payload[i]($) = 10 * i + 3;
            return i;
        }));
        stages.push_back(make_stage<int, void>(fj::filter_mode::parallel, [this](int i) {
            RL_ASSERT(payload[i]($) == 10 * i + 3);
            outputs[i]($) = outputs[i]($) + 1;
            --live;
        }));
        {
            model_run run(pool, Tokens, stages, std::stop_token());
            run.run();
            // Returned: every item has left the last stage, exactly once, in order.
            RL_ASSERT(produced($) == Items);
            RL_ASSERT(next($) == Items);
            for (int i = 0; i < Items; ++i)
                RL_ASSERT(outputs[i]($) == 1);
            RL_ASSERT(live == 0);
        }
        pool.finished.store(true, rl::mo_release, $);
    }

    int input(fj::flow_control& fc) {
        const int i = produced($);
        if (i == Items) {
            fc.stop();
            return 0;
        }
        produced($) = i + 1;
        RL_ASSERT(++live <= Tokens); // at most Tokens items in flight
        payload[i]($) = 10 * i + 1;
        return i;
    }

    template <class In, class Out, class F>
    static std::shared_ptr<fj::detail::pipeline_stage> make_stage(fj::filter_mode mode, F fn) {
        return std::make_shared<fj::detail::stage_of<In, Out, F>>(mode, std::move(fn));
    }
};

constexpr auto in_order = fj::filter_mode::serial_in_order;

// Two threads, two tokens, three items: the third item waits for a token to retire.
using two_threads_two_tokens = pipeline_scenario<2, 2, 3, in_order>;
// Two threads, three tokens, three items: all three in flight at once.
using two_threads_three_tokens = pipeline_scenario<2, 3, 3, in_order>;
// Three threads, two tokens, two items: both items at once, on any two of the threads.
using three_threads_two_tokens = pipeline_scenario<3, 2, 2, in_order>;

// Context bound 1 (one preemption per execution; a thread that yields in a wait is no preemption).
constexpr fj::model::search k_search{rl::sched_bound, 1};

TEST(pipeline_model, two_threads_two_tokens) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_threads_two_tokens>(k_search));
}

TEST(pipeline_model, two_threads_three_tokens) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<two_threads_three_tokens>(k_search));
}

TEST(pipeline_model, three_threads_two_tokens) {
    FJ_EXPECT_MODEL_PASSES(fj::model::check<three_threads_two_tokens>(k_search));
}

TEST(pipeline_model, an_out_of_order_stage_is_caught) {
    EXPECT_FALSE((
        fj::model::check<pipeline_scenario<2, 2, 3, fj::filter_mode::serial_out_of_order>>(k_search)
            .passed));
}

TEST(pipeline_model, a_parallel_stage_is_caught) {
    EXPECT_FALSE(
        (fj::model::check<pipeline_scenario<2, 2, 3, fj::filter_mode::parallel>>(k_search).passed));
}

} // namespace
