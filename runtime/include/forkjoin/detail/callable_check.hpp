// Rejects empty callables (a null function pointer, an empty std::function) when work is created,
// with a clear message, instead of failing later inside a worker.
#pragma once

#include "../errors.hpp"

#include <functional>
#include <type_traits>

namespace fj::detail {

template <class T>
struct is_std_function : std::false_type {};
template <class Sig>
struct is_std_function<std::function<Sig>> : std::true_type {};

template <class F>
void check_callable(const F& fn) {
    using D = std::remove_cvref_t<F>;
    if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D> ||
                  is_std_function<D>::value) {
        if (!fn)
            throw_invalid_argument(
                "fj: the task is an empty callable (null function pointer or empty std::function)");
    }
}

} // namespace fj::detail
