// Timed waits run on steady_clock: a deadline on another clock is converted once, when the wait
// begins.
#pragma once

#include <chrono>
#include <type_traits>

namespace fj::detail {

template <class Clock, class Duration>
std::chrono::steady_clock::time_point
to_steady_deadline(const std::chrono::time_point<Clock, Duration>& deadline) {
    if constexpr (std::is_same_v<Clock, std::chrono::steady_clock>)
        return std::chrono::time_point_cast<std::chrono::steady_clock::duration>(deadline);
    else
        return std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline -
                                                                               Clock::now());
}

} // namespace fj::detail
