// The process-wide default scheduler.
#include "lifecycle/default_scheduler.hpp"

#include "platform/process_generation.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <forkjoin/async.hpp>

namespace fj {

namespace {

// The default scheduler is created on first use (a program that never uses it starts no threads)
// and destroyed at exit, where its destructor finishes every queued task first. In the child of a
// fork() the one inherited from the parent has no threads: it is abandoned (never destroyed: it
// would wait for threads that are not there) and a fresh one is created (#fork).
struct default_holder {
    std::mutex mutex;
    std::unique_ptr<scheduler> current; // guarded by mutex
    std::atomic<scheduler*> published{nullptr};
    std::atomic<std::uint64_t> generation{0};
};

default_holder& holder() {
    static default_holder h;
    return h;
}

} // namespace

scheduler& default_scheduler() {
    default_holder& h = holder();
    const std::uint64_t generation = detail::process_generation();
    // acquire: pairs with the release below, so the scheduler is fully built when seen.
    scheduler* s = h.published.load(std::memory_order_acquire);
    if (s != nullptr && h.generation.load(std::memory_order_relaxed) == generation) [[likely]]
        return *s;
    std::lock_guard lock(h.mutex);
    if (h.current == nullptr || h.generation.load(std::memory_order_relaxed) != generation) {
        if (h.current != nullptr)
            (void)h.current.release(); // created before fork(): its threads live in the parent
        h.current = std::make_unique<scheduler>();
        h.generation.store(generation, std::memory_order_relaxed);
        h.published.store(h.current.get(), std::memory_order_release);
    }
    return *h.current;
}

} // namespace fj

namespace fj::detail {

void lock_default_scheduler() noexcept {
    holder().mutex.lock();
}

void unlock_default_scheduler() noexcept {
    holder().mutex.unlock();
}

} // namespace fj::detail
