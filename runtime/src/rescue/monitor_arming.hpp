// Whether the rescue monitor is armed (docs/design/rescue.md, step 2): its m_monitor_idle flag and
// the Dekker pair over that flag and the pool's m_active. The monitor disarms (goes idle) only
// while some worker is idle, and only if no wake-up made every worker busy meanwhile; a waker that
// makes every worker busy re-arms it. rescuer (rescue.hpp) instantiates it with std_atomics; the
// model test (test/model/rescue_arming_model_test.cpp) with Relacy's.
#pragma once

#include <cstddef>
#include <cstdint>

#include <forkjoin/detail/atomics.hpp>

namespace fj::detail {

template <class Atomics = std_atomics>
class basic_monitor_arming {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

public:
    // The monitor: true if some worker is idle and the monitor is now disarmed until a waker
    // re-arms it. `active` is the pool's m_active, `workers` its worker count. seq_cst store,
    // then seq_cst load: the Dekker pair with armed_wanted() (a waker's m_active increment, then
    // its load of m_monitor_idle). Either the waker sees the flag and arms, or this load sees its
    // increment.
    bool disarm_if_some_idle(const atomic<std::uint32_t>& active, std::size_t workers) noexcept {
        if (active.load(std::memory_order_seq_cst) < workers) {
            m_monitor_idle.store(true, std::memory_order_seq_cst);
            if (active.load(std::memory_order_seq_cst) < workers)
                return true;
            m_monitor_idle.store(false, std::memory_order_seq_cst); // raced with a wake-up: go on
        }
        return false;
    }

    // A waker that has raised m_active to the worker count (its increment is seq_cst): whether
    // the monitor is disarmed and must be armed. seq_cst: the Dekker pair with the monitor's
    // store of m_monitor_idle and load of m_active in disarm_if_some_idle(): the waker's increment
    // of m_active precedes this load in the single total order, or the monitor's re-check sees the
    // increment.
    bool armed_wanted() const noexcept { return m_monitor_idle.load(std::memory_order_seq_cst); }

    // Arms the monitor: true for the one caller that found it disarmed, which then notifies it.
    // seq_cst exchange: only one waker notifies per disarm.
    bool arm() noexcept { return m_monitor_idle.exchange(false, std::memory_order_seq_cst); }

    // The monitor (under the rescuer's mutex): whether it is disarmed, waiting to be armed.
    // seq_cst, as every access to the flag.
    bool disarmed() const noexcept { return m_monitor_idle.load(std::memory_order_seq_cst); }

private:
    // True while the monitor waits to be armed (no sampling: some worker was idle).
    atomic<bool> m_monitor_idle{false};
};

using monitor_arming = basic_monitor_arming<>;

} // namespace fj::detail
