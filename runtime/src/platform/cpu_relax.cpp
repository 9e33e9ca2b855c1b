// yield_thread(): the out-of-line half of the spin-wait hints (detail/cpu_relax.hpp).
#include <thread>

#include <forkjoin/detail/cpu_relax.hpp>

namespace fj::detail {

void yield_thread() noexcept {
    std::this_thread::yield();
}

} // namespace fj::detail
