// fj::when_any: a future that becomes ready when the first input future is ready, holding its
// index and all the inputs, in the shape of the C++ Concurrency TS:
//
//   auto first = fj::when_any(std::move(futures)).get();   // fj::when_any_result<vector<...>>
//   int value = first.futures[first.index].get();
//
// The inputs are consumed; the others keep running and can be waited for or dropped as usual.
// With no inputs the result is ready at once with index = static_cast<std::size_t>(-1). An
// invalid (empty) input future throws std::invalid_argument. Nothing blocks.
//
// How (each input's completion has one waiter slot, and the caller gets the inputs back, so the
// op must leave those slots empty): the first input to become ready fires the op; once the
// arming loop has finished too (a two-party gate), the op deregisters its records from the inputs
// still pending and completes. A record whose input finished meanwhile cannot be deregistered:
// its wake-up is on the way, so the op is reference-counted (one count per record, one for the
// future) and freed by the last of them.
#pragma once

#include "detail/future_sequence.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include <forkjoin/future.hpp>

namespace fj {

template <class Sequence>
struct when_any_result {
    std::size_t index;
    Sequence futures;
};

namespace detail {

// GCC 12 with -fsanitize=address at -O2 reports the reference-count decrement in release_ref(),
// inlined into on_ready() and wake(), as "writing 8 bytes into a region of size 0"
// (-Wstringop-overflow): it loses track of the op behind a record's pointer. A false positive
// (the op lives until its last reference is released), silenced for this class only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
template <class Inputs>
class when_any_op final : public future_state<when_any_result<Inputs>> {
public:
    using result_type = when_any_result<Inputs>;

    static future<result_type> start(Inputs&& inputs) {
        auto* op = new when_any_op(std::move(inputs));
        future<result_type> result = future_access::make<result_type>(op);
        op->arm();
        return result;
    }

private:
    struct record : waiter {
        when_any_op* op = nullptr;
        completion* source = nullptr;
        std::size_t index = 0;
        bool registered = false; // written by arm(), read by complete() after the gate
    };

    explicit when_any_op(Inputs&& inputs)
        : m_inputs(std::move(inputs)), m_count(future_count(m_inputs)),
          m_records(std::make_unique<record[]>(m_count)), m_refs(m_count + 1),
          m_gate(m_count == 0 ? 1 : 2) {
        this->m_manage = &destroy_only<result_type, &destroy_impl>;
        (void)this->m_completion.try_start(this->m_start); // running from now on: not cancellable
        if (m_count == 0)
            m_index = static_cast<std::size_t>(-1);
    }

    void arm() noexcept {
        for_each_future(m_inputs, [&](auto& f, std::size_t i) {
            record& r = m_records[i];
            r.op = this;
            r.m_wake = &wake;
            r.index = i;
            r.source = &future_access::state(f)->m_completion;
            // relaxed: only saves registrations once an input has fired; correctness does not
            // depend on seeing it.
            if (m_fired.load(std::memory_order_relaxed)) {
                release_ref(); // never registered: nothing will wake it
            } else if (r.source->try_register(&r)) {
                r.registered = true;
            } else {
                on_ready(i); // already ready (or cancelled)
            }
        });
        pass_gate();
    }

    static void wake(waiter* w) noexcept {
        auto* r = static_cast<record*>(w);
        r->op->on_ready(r->index);
    }

    void on_ready(std::size_t i) noexcept {
        // acq_rel: the winner's index write is ordered before its gate pass.
        if (!m_fired.exchange(true, std::memory_order_acq_rel)) {
            m_index = i;
            pass_gate();
        }
        release_ref(); // this record is done with
    }

    void pass_gate() noexcept {
        // acq_rel: complete() runs after both the arming loop (the records' fields) and the
        // winner (m_index).
        if (m_gate.fetch_sub(1, std::memory_order_acq_rel) == 1)
            complete();
    }

    void complete() noexcept {
        std::size_t removed = 0; // records removed before their input finished: no wake-up
        for (std::size_t j = 0; j < m_count; ++j) {
            record& r = m_records[j];
            if (r.registered && r.source->try_deregister(&r))
                ++removed;
        }
        // Cannot reach zero: the future's reference is held until finish() below. relaxed would
        // do for the count alone; release keeps these records' last accesses before the delete.
        m_refs.fetch_sub(removed, std::memory_order_release);
        // Every input is now ready or unwatched: the caller may wait on any of them.
        auto make_result = [this]() -> result_type { return {m_index, std::move(m_inputs)}; };
        this->m_result.run(make_result);
        this->m_home = current_scheduler_id(); // then() on this future continues there
        if (this->m_completion.finish())       // last touch, unless the future was dropped
            release_ref();
    }

    void release_ref() noexcept {
        // acq_rel: every record's last access happens before the delete.
        if (m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
            delete this;
    }

    static void destroy_impl(future_state<result_type>* s) noexcept {
        static_cast<when_any_op*>(s)->release_ref();
    }

    Inputs m_inputs;
    std::size_t m_count;
    std::unique_ptr<record[]> m_records;
    std::atomic<std::size_t> m_refs;
    std::atomic<int> m_gate;
    std::atomic<bool> m_fired{false};
    std::size_t m_index = 0;
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace detail

template <class T>
future<when_any_result<std::vector<future<T>>>> when_any(std::vector<future<T>> futures) {
    detail::check_all_valid(futures, "fj::when_any");
    return detail::when_any_op<std::vector<future<T>>>::start(std::move(futures));
}

template <class... Ts>
future<when_any_result<std::tuple<future<Ts>...>>> when_any(future<Ts>... futures) {
    std::tuple<future<Ts>...> inputs(std::move(futures)...);
    detail::check_all_valid(inputs, "fj::when_any");
    return detail::when_any_op<std::tuple<future<Ts>...>>::start(std::move(inputs));
}

} // namespace fj
