// A pool with more workers than CPUs to run them on (docs/design/crowded.md): a taskset or
// container narrower than the pool, or a pool sized larger than the machine. Then every spinning
// or newly woken worker takes a CPU from one that has work (Arora, Blumofe and Plaxton,
// "Thread scheduling for multiprogrammed multiprocessors", SPAA 1998), so:
//   - a push wakes a sleeper only while fewer workers are awake than there are CPUs;
//   - an idle worker spins only while the awake workers, itself included, fit on the CPUs, and
//     otherwise yields once and sleeps;
//   - a sleeper of a crowded pool sleeps with a timeout (the backstop): a worker that skipped a
//     wake-up may block in the kernel before it takes what it pushed.
// With no more workers than CPUs none of this changes anything: a push that finds a sleeper then
// always sees fewer workers awake than CPUs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace fj::detail {

// Workers that are not between prepare_wait() and leaving the event count (the caller among
// them when it is not waiting). `waiters` may count spare workers too: then fewer are reported
// awake than are, which errs towards waking. `workers` counts the threads outside the pool
// inside their own calls too (docs/design/callers.md): they run tasks beside the workers and
// never wait on the event count, so a pool of P workers with one caller inside is crowded on P
// CPUs, and a caller's pushes wake only P - 1 of its workers.
constexpr std::size_t awake_workers(std::size_t workers, std::uint32_t waiters) noexcept {
    return waiters < workers ? workers - waiters : 0;
}

// A push by an awake worker wakes no sleeper when this holds: the awake workers already have
// every CPU, and the pusher itself takes what it pushed.
constexpr bool awake_fill_cpus(std::size_t workers, std::uint32_t waiters,
                               std::size_t cpus) noexcept {
    return awake_workers(workers, waiters) >= cpus;
}

// How long a sleeper of a crowded pool sleeps before it looks again by itself: from
// k_backstop_first, doubling while it finds nothing queued, up to k_backstop_last (an idle
// crowded pool then costs each worker a few wake-ups a second). Long next to a task: a sleeper
// that wakes while the others are busy steals, and each such steal costs the pool a little.
inline constexpr std::chrono::milliseconds k_backstop_first{50};
inline constexpr std::chrono::milliseconds k_backstop_last{400};
constexpr std::chrono::milliseconds next_backstop(std::chrono::milliseconds t) noexcept {
    return std::min(t * 2, k_backstop_last);
}

// How often a worker going idle re-reads its affinity mask (a taskset applied to a running
// process, a container resized in place).
inline constexpr std::chrono::milliseconds k_cpus_recheck{100};

} // namespace fj::detail
