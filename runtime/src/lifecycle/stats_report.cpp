// Scheduler statistics: the snapshot of a pool (scheduler::stats), the totals, and their text form.
#include "lifecycle/lifecycle.hpp"
#include "parking/parking.hpp" // add_fiber_stats
#include "rescue/rescue.hpp"

#include <ostream>
#include <string>

#include <forkjoin/stats.hpp>

namespace fj {

namespace detail {

scheduler_stats snapshot(const pool& p) {
    scheduler_stats s;
    const std::size_t n = p.m_workers.size();
    s.workers.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const worker& w = p.m_workers[i];
        const worker_counters& c = w.m_stats;
        worker_stats ws{c.tasks_run.get(),
                        c.forks.get(),
                        c.steals.get(),
                        c.failed_steals.get(),
                        c.failed_before_steal.get(),
                        c.injected_taken.get(),
                        c.sleeps.get(),
                        c.wakeups.get(),
                        c.parks.get(),
                        c.resumes.get(),
                        c.migrations.get(),
                        c.sync_parks.get()};
        ws.queued = w.m_deque.size_hint();
        ws.asleep = ws.sleeps > ws.wakeups;
        ws.spare = w.m_role == slot_role::spare;
        ws.caller = w.m_role == slot_role::caller;
        s.workers.push_back(ws);
    }
    s.closed = p.is_closed();
    s.injected_empty = p.m_injected.empty_hint();
    // A diagnostic snapshot: any value will do.
    s.active = p.m_active.load(std::memory_order_relaxed);
    s.parked = p.m_parked.load(std::memory_order_relaxed);
    s.parking = p.m_parking != nullptr;
    if (p.m_parking != nullptr)
        add_fiber_stats(*p.m_parking, s);
    if (p.m_rescue != nullptr) {
        const rescuer::counts c = p.m_rescue->snapshot();
        s.rescues = c.rescues;
        s.blocking_handoffs = c.blocking_handoffs;
        s.spares_started = c.rescues + c.blocking_handoffs;
        s.spares_retired = c.retired;
        s.spares_running = c.running;
        s.monitor_looks = c.looks;
        s.monitor_state_reads = c.state_reads;
    }
    return s;
}

} // namespace detail

worker_stats& worker_stats::operator+=(const worker_stats& o) noexcept {
    tasks_run += o.tasks_run;
    forks += o.forks;
    steals += o.steals;
    failed_steals += o.failed_steals;
    failed_before_steal += o.failed_before_steal;
    injected_taken += o.injected_taken;
    sleeps += o.sleeps;
    wakeups += o.wakeups;
    parks += o.parks;
    sync_parks += o.sync_parks;
    resumes += o.resumes;
    migrations += o.migrations;
    return *this;
}

worker_stats scheduler_stats::total() const noexcept {
    worker_stats sum;
    for (const auto& w : workers)
        sum += w;
    return sum;
}

std::ostream& operator<<(std::ostream& out, const scheduler_stats& stats) {
    const auto counters = [&](const std::string& name, const worker_stats& w) {
        out << name << ": tasks_run=" << w.tasks_run << " forks=" << w.forks
            << " steals=" << w.steals << " failed_steals=" << w.failed_steals
            << " failed_before_steal=" << w.failed_before_steal
            << " injected_taken=" << w.injected_taken << " sleeps=" << w.sleeps
            << " wakeups=" << w.wakeups << " parks=" << w.parks << " resumes=" << w.resumes
            << " migrations=" << w.migrations << " sync_parks=" << w.sync_parks;
    };
    for (std::size_t i = 0; i < stats.workers.size(); ++i) {
        const worker_stats& w = stats.workers[i];
        counters((w.spare ? "spare " : "worker ") + std::to_string(i), w);
        out << " | deque=" << w.queued << (w.asleep ? " asleep" : " awake") << '\n';
    }
    counters("total", stats.total());
    out << "\nscheduler: " << (stats.closed ? "closed" : "open") << ", injection queue "
        << (stats.injected_empty ? "empty" : "not empty") << ", active=" << stats.active
        << ", parked=" << stats.parked;
    if (stats.parking)
        out << ", fiber stacks=" << stats.fiber_stacks << " (peak in use "
            << stats.peak_fiber_stacks << ")\n";
    else
        out << " (parking off)\n";
    if (stats.spares_started != 0)
        out << "spares: " << stats.spares_running << " running, " << stats.spares_started
            << " started (" << stats.rescues << " rescues, " << stats.blocking_handoffs
            << " for fj::blocking), " << stats.spares_retired << " retired\n";
    if (stats.monitor_looks != 0)
        out << "monitor: " << stats.monitor_looks << " looks, " << stats.monitor_state_reads
            << " kernel states read\n";
    return out;
}

} // namespace fj
