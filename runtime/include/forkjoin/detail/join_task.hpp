// The second branch of fj::join, kept on the joining frame's stack (no allocation). If nobody
// steals it, the joiner pops it back by identity and runs it inline: no atomic beyond the deque's.
// If a thief takes it, the thief runs it and signals m_done; the joiner's frame outlives the task
// because the joiner waits for m_done before returning.
#pragma once

#include "completion.hpp"
#include "result_slot.hpp"
#include "task.hpp"

#include <type_traits>
#include <utility>
#include <variant>

namespace fj::detail {

template <class F>
class join_task final : public task {
public:
    using result_type = std::invoke_result_t<F&>;

    explicit join_task(F& fn) noexcept : m_fn(fn) { m_run = &run_stolen; }

    void run_inline() noexcept { m_result.run(m_fn); }

    completion m_done;
    result_slot<result_type> m_result;

private:
    static void run_stolen(task* t) noexcept {
        auto* self = static_cast<join_task*>(t);
        self->m_result.run(self->m_fn);
        // The joiner never detaches, so finish() never asks us to free; this is our last touch.
        [[maybe_unused]] const bool detached = self->m_done.finish();
    }

    F& m_fn;
};

// fj::join returns std::pair<A, B> of the branches' results, with void mapped to std::monostate;
// when both branches return void it returns void.
template <class T>
using join_value_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class Ra, class Rb>
using join_result_t = std::conditional_t<std::is_void_v<Ra> && std::is_void_v<Rb>, void,
                                         std::pair<join_value_t<Ra>, join_value_t<Rb>>>;

template <class T>
join_value_t<T> take_join_value(result_slot<T>& r) {
    if constexpr (std::is_void_v<T>) {
        r.take();
        return {};
    } else {
        return r.take();
    }
}

} // namespace fj::detail
