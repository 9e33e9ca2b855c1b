// A non-owning reference to a callable, for passing predicates to out-of-line slow paths without
// allocating. The referenced callable must outlive the function_ref.
#pragma once

#include "invoke.hpp"

#include <memory>
#include <type_traits>
#include <utility>

namespace fj::detail {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
public:
    template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> &&
             std::is_invocable_r_v<R, F&, Args...>) function_ref(F&& f)
    noexcept // NOLINT: implicit by design, like std::function_ref
        : m_object(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          m_call([](void* o, Args... args) -> R {
              return detail::invoke(*static_cast<std::remove_reference_t<F>*>(o),
                                    std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return m_call(m_object, std::forward<Args>(args)...); }

private:
    void* m_object;
    R (*m_call)(void*, Args...);
};

} // namespace fj::detail
