// fj::detail::invoke(f, args...): std::invoke without <functional>. std::invoke is declared in
// <functional>, which adds about 18,000 preprocessed lines to every translation unit that includes
// <forkjoin/forkjoin.hpp>; this needs only <type_traits> and <utility>.
//
// The INVOKE rules ([func.require]) the library needs: a callable object, function or function
// pointer called with the arguments; a pointer to member function called on an object of its
// class (or a derived one) or through anything that dereferences to one (a pointer, a smart
// pointer); a pointer to data member read the same ways. Not supported: a std::reference_wrapper
// as the object of a pointer to member (pass the object or a pointer to it). Same result
// type and value category as std::invoke (a prvalue stays a prvalue, so guaranteed elision still
// applies), same noexcept, and no overload when the call is ill-formed (SFINAE-friendly).
// std::invoke_result_t and std::is_invocable_v come from <type_traits> and need nothing here.
#pragma once

#include <type_traits>
#include <utility>

namespace fj::detail {

namespace invoke_impl {

template <class M>
concept member_function = std::is_function_v<M>; // M C::* points to a member function
template <class M>
concept data_member = !std::is_function_v<M>;
// T is (a reference to) a C or to a class derived from C, not a pointer to one.
template <class T, class C>
concept object_of = std::is_base_of_v<C, std::remove_cvref_t<T>>;
template <class T, class C>
concept not_object_of = !std::is_base_of_v<C, std::remove_cvref_t<T>>;
template <class F>
concept member_pointer = std::is_member_pointer_v<std::remove_cvref_t<F>>;
template <class F>
concept not_member_pointer = !std::is_member_pointer_v<std::remove_cvref_t<F>>;

// Pointer to member function, on an object.
template <member_function M, class C, object_of<C> T, class... Args>
constexpr auto member(M C::*pm, T&& object, Args&&... args) noexcept(
    noexcept((std::forward<T>(object).*pm)(std::forward<Args>(args)...)))
    -> decltype((std::forward<T>(object).*pm)(std::forward<Args>(args)...)) {
    return (std::forward<T>(object).*pm)(std::forward<Args>(args)...);
}

// Pointer to member function, through a pointer (or anything with a unary *).
template <member_function M, class C, not_object_of<C> T, class... Args>
constexpr auto member(M C::*pm, T&& pointer, Args&&... args) noexcept(
    noexcept(((*std::forward<T>(pointer)).*pm)(std::forward<Args>(args)...)))
    -> decltype(((*std::forward<T>(pointer)).*pm)(std::forward<Args>(args)...)) {
    return ((*std::forward<T>(pointer)).*pm)(std::forward<Args>(args)...);
}

// Pointer to data member, on an object: an lvalue for an lvalue, an xvalue for an rvalue.
template <data_member M, class C, object_of<C> T>
constexpr auto member(M C::*pm, T&& object) noexcept -> decltype(std::forward<T>(object).*pm) {
    return std::forward<T>(object).*pm;
}

// Pointer to data member, through a pointer.
template <data_member M, class C, not_object_of<C> T>
constexpr auto member(M C::*pm, T&& pointer) noexcept(noexcept(*std::forward<T>(pointer)))
    -> decltype((*std::forward<T>(pointer)).*pm) {
    return (*std::forward<T>(pointer)).*pm;
}

} // namespace invoke_impl

// Call with qualified names only (detail::invoke(...)): unqualified, argument-dependent lookup
// would also find std::invoke wherever <functional> is included.
template <invoke_impl::not_member_pointer F, class... Args>
constexpr auto
invoke(F&& f, Args&&... args) noexcept(noexcept(std::forward<F>(f)(std::forward<Args>(args)...)))
    -> decltype(std::forward<F>(f)(std::forward<Args>(args)...)) {
    return std::forward<F>(f)(std::forward<Args>(args)...);
}

template <invoke_impl::member_pointer F, class... Args>
constexpr auto
invoke(F&& f,
       Args&&... args) noexcept(noexcept(invoke_impl::member(f, std::forward<Args>(args)...)))
    -> decltype(invoke_impl::member(f, std::forward<Args>(args)...)) {
    return invoke_impl::member(f, std::forward<Args>(args)...);
}

// The type detail::invoke(f, args...) returns: std::invoke_result_t<F, Args...>.
template <class F, class... Args>
using invoke_result_t = decltype(detail::invoke(std::declval<F>(), std::declval<Args>()...));

} // namespace fj::detail
