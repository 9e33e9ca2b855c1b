// Rejects empty callables (a null function pointer, an empty std::function) when work is created,
// with a clear message, instead of failing later inside a worker.
#pragma once

#include "../errors.hpp"

#include <type_traits>

namespace fj::detail {

// std::function (and look-alikes such as boost::function), recognised by its shape rather than by
// name, so that this header need not include <functional> (about 18,000 preprocessed lines): a
// class with a nested result_type that converts to bool, empty or not, only explicitly. A callable
// with an explicit operator bool of its own but no result_type is left alone.
template <class T>
concept function_wrapper = std::is_class_v<T> && requires {
    typename T::result_type;
} && std::is_constructible_v<bool, const T&> && !std::is_convertible_v<const T&, bool>;

template <class F>
void check_callable(const F& fn) {
    using D = std::remove_cvref_t<F>;
    if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D> || function_wrapper<D>) {
        if (!fn)
            throw_invalid_argument(
                "fj: the task is an empty callable (null function pointer or empty std::function)");
    }
}

} // namespace fj::detail
