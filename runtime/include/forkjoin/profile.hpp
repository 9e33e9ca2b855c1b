// fj::profile: measure the parallelism of a fork/join computation (docs/tracing.md#profiler).
//
//   fj::profile_report r = fj::profile([&] { result = fib(30); });
//   std::cout << r;   // work, span, parallelism, and the speed-up they allow on P workers
//
// Work (T1) is the total time tasks spent running; span (T∞) the longest chain of it that must
// run in order (along fork and join edges). Their ratio, the parallelism, bounds the speed-up on
// any number of workers: a program with parallelism 1.5 cannot run 2x faster on 2 cores, however
// the scheduler is tuned. Measured edges: fork/submit/async + get()/wait(), fj::join (and the
// algorithms built on it: parallel_for, parallel_reduce, parallel_invoke). Not measured:
// continuations (then, when_all, when_any) and tasks submitted from outside the region.
#pragma once

#include "async.hpp"
#include "detail/callable_check.hpp"
#include "detail/invoke.hpp"
#include "detail/profile_frame.hpp"
#include "profile_report.hpp"
#include "scheduler.hpp"

#include <memory>
#include <utility>

namespace fj {

namespace detail {

// The root frame of a region. Nested in a profiled task (fj::profile inside fj::profile), the
// inner region counts in the outer one as a sequential piece: its work adds to the outer work,
// its span to the outer frame's span.
class profile_root {
public:
    explicit profile_root(profile_region& region) noexcept : m_region(region) {
        profile_frame_begin(m_frame, &region, 0);
    }
    ~profile_root() {
        profile_frame* outer = m_frame.below;
        profile_frame_end(m_frame);
        if (outer != nullptr)
            profile_absorb(*outer, m_region);
    }
    profile_root(const profile_root&) = delete;
    profile_root& operator=(const profile_root&) = delete;

private:
    profile_region& m_region;
    profile_frame m_frame;
};

} // namespace detail

// Runs f() as a task of `sched` (inline when called from one of its tasks, else submitted and
// waited for) and returns what its computation's work and span were. f's exception propagates.
// f's result is discarded: capture what you need by reference. A task forked inside and never
// joined counts only as far as it got before f returned.
template <class F>
profile_report profile(scheduler& sched, F&& f) {
    detail::check_callable(f);
    const auto shared_region = std::make_shared<detail::profile_region>();
    detail::profile_region& region = *shared_region;
    auto root = [&] {
        const detail::profile_root measured(region);
        detail::invoke(f);
    };
    struct forget_on_exit { // the region's unjoined edges, even if f throws
        const detail::profile_region& region;
        ~forget_on_exit() { detail::profile_forget(region); }
    } forget{region};
    if (sched.on_worker_thread() && detail::current_scheduler_or_null() == &sched)
        root();
    else
        sched.submit(root).get();
    return detail::make_profile_report(region);
}

template <class F>
profile_report profile(F&& f) {
    return profile(current_scheduler(), std::forward<F>(f));
}

} // namespace fj
