// fj::when_all: a future that becomes ready when every input future is ready, holding the inputs
// (now ready) for the caller to get(), in the shape of the C++ Concurrency TS:
//
//   std::vector<fj::future<int>> parts = ...;
//   fj::future<std::vector<fj::future<int>>> all = fj::when_all(std::move(parts));
//   auto both = fj::when_all(std::move(a), std::move(b));   // future<tuple<future<A>, future<B>>>
//
// The inputs are consumed. Exceptions stay inside the input futures (get() on each rethrows its
// own). Nothing blocks: each input's completion wakes a record of the when_all, and the last one
// completes it, on whichever thread finished that input. An empty input is ready at once. An
// invalid (empty) input future throws std::invalid_argument. when_all's future cannot be
// cancelled (cancel() returns false): it is running from the start.
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

namespace detail {

template <class Inputs>
class when_all_op final : public future_state<Inputs> {
public:
    static future<Inputs> start(Inputs&& inputs) {
        auto* op = new when_all_op(std::move(inputs));
        future<Inputs> result = future_access::make<Inputs>(op); // holds the state during arm()
        op->arm();
        return result;
    }

private:
    struct record : waiter {
        when_all_op* op = nullptr;
    };

    explicit when_all_op(Inputs&& inputs)
        : m_inputs(std::move(inputs)), m_count(future_count(m_inputs)),
          m_records(std::make_unique<record[]>(m_count)), m_pending(m_count + 1) {
        this->m_manage = &destroy_only<Inputs, &destroy_impl>;
        (void)this->m_completion.try_start(this->m_start); // running from now on: not cancellable
    }

    void arm() noexcept {
        for_each_future(m_inputs, [&](auto& f, std::size_t i) {
            record& r = m_records[i];
            r.op = this;
            r.m_wake = &wake;
            if (!future_access::state(f)->m_completion.try_register(&r))
                arrive(); // already ready
        });
        arrive(); // the arming guard: nobody completes the op while this loop still reads it
    }

    static void wake(waiter* w) noexcept { static_cast<record*>(w)->op->arrive(); }

    void arrive() noexcept {
        // acq_rel: the last arrival happens after every input's finish() (each arrival releases
        // what its input's acquire saw), so the inputs' results are visible to the consumer.
        if (m_pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
            complete();
    }

    void complete() noexcept {
        auto move_inputs = [this]() -> Inputs { return std::move(m_inputs); };
        this->m_result.run(move_inputs);
        this->m_home = current_scheduler_id(); // then() on this future continues there
        if (this->m_completion.finish())       // last touch, unless the future was dropped
            destroy_impl(this);
    }

    static void destroy_impl(future_state<Inputs>* s) noexcept {
        delete static_cast<when_all_op*>(s);
    }

    Inputs m_inputs;
    std::size_t m_count;
    std::unique_ptr<record[]> m_records;
    std::atomic<std::size_t> m_pending;
};

} // namespace detail

template <class T>
future<std::vector<future<T>>> when_all(std::vector<future<T>> futures) {
    detail::check_all_valid(futures, "fj::when_all");
    return detail::when_all_op<std::vector<future<T>>>::start(std::move(futures));
}

template <class... Ts>
future<std::tuple<future<Ts>...>> when_all(future<Ts>... futures) {
    std::tuple<future<Ts>...> inputs(std::move(futures)...);
    detail::check_all_valid(inputs, "fj::when_all");
    return detail::when_all_op<std::tuple<future<Ts>...>>::start(std::move(inputs));
}

} // namespace fj
