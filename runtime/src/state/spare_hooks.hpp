// What the worker loop and the sleep protocol tell the rescue of blocked pools (rescue/, which
// sits above them and starts spare workers that run the worker loop): an interface in the pool's
// state, so that the mechanisms below the rescue never include it. None is called per task: once
// per thread start, per wake-up that makes every worker awake, per idle round of a spare, and
// around the rare kernel waits of the runtime's own (own_wait.hpp).
#pragma once

#include <cstddef>

namespace fj::detail {

class spare_hooks {
public:
    // The thread serving worker slot `index` begins (the rescue records its kernel thread id).
    virtual void on_thread_start(std::size_t index) noexcept = 0;
    // A worker woke up and made the pool's active count reach its worker count: every worker may
    // be busy, so the rescue's monitor should watch.
    virtual void on_all_awake() noexcept = 0;
    // Whether spare slot `index` has been asked to retire (its work is done elsewhere).
    virtual bool retire_requested(std::size_t index) const noexcept = 0;
    // The thread serving slot `index` enters (`begins`) or leaves a kernel wait of the runtime's
    // own that ends by itself (own_wait.hpp): meanwhile it must not pass for blocked.
    virtual void on_own_wait(std::size_t index, bool begins) noexcept = 0;

protected:
    ~spare_hooks() = default;
};

} // namespace fj::detail
