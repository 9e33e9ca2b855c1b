// fj::detail::invoke against std::invoke: the same result types, value categories, noexcept and
// results for callables and pointers to members; and the algorithms that call it, given pointers
// to members.

#include "support.hpp"

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <forkjoin/detail/callable_check.hpp>
#include <forkjoin/detail/invoke.hpp>
#include <forkjoin/detail/result_slot.hpp>
#include <forkjoin/forkjoin.hpp>

namespace {

struct base {
    int value = 1;
    int get() const { return value; }
    int add(int k) noexcept { return value += k; }
    int by_ref() & { return 10; }
    int by_ref() && { return 20; }
};
struct derived : base {};

struct only_copy_callable {
    int operator()(int x) const noexcept { return x + 1; }
};
struct throwing_callable {
    std::string operator()(const std::string& s) const { return s + "!"; }
};
struct not_movable {
    explicit not_movable(int v) : value(v) {}
    not_movable(const not_movable&) = delete;
    not_movable(not_movable&&) = delete;
    int value;
};

int free_function(int x) {
    return 2 * x;
}

// The result types (and value categories) agree with std::invoke_result_t.
template <class F, class... Args>
constexpr bool same_result =
    std::is_same_v<fj::detail::invoke_result_t<F, Args...>, std::invoke_result_t<F, Args...>>;
// And noexcept agrees with std::is_nothrow_invocable_v.
template <class F, class... Args>
constexpr bool same_noexcept = noexcept(fj::detail::invoke(std::declval<F>(),
                                                           std::declval<Args>()...)) ==
                               std::is_nothrow_invocable_v<F, Args...>;
// And a call that std::invoke rejects is no overload (SFINAE), not a hard error.
template <class F, class... Args>
constexpr bool invocable = requires(F&& f, Args&&... args) {
    fj::detail::invoke(std::forward<F>(f), std::forward<Args>(args)...);
};

using get_t = decltype(&base::get);
using add_t = decltype(&base::add);
using value_t = decltype(&base::value);
using lref_t = int (base::*)() &;
using rref_t = int (base::*)() &&;

static_assert(same_result<only_copy_callable&, int> && same_noexcept<only_copy_callable&, int>);
static_assert(same_result<throwing_callable, const char*> &&
              same_noexcept<throwing_callable, const char*>);
static_assert(same_result<int (*)(int), int> && same_noexcept<int (*)(int), int>);
static_assert(same_result<int (&)(int), int>);

static_assert(same_result<get_t, base&> && same_noexcept<get_t, base&>);
static_assert(same_result<get_t, const derived&> && same_result<get_t, const base*>);
static_assert(same_result<get_t, std::unique_ptr<derived>&>);
static_assert(same_result<add_t, base&, int> && same_noexcept<add_t, base&, int>);
static_assert(same_result<add_t, derived*, long> && same_noexcept<add_t, derived*, long>);
static_assert(same_noexcept<add_t, const std::shared_ptr<base>&, int>);
static_assert(same_result<lref_t, base&> && same_result<rref_t, base&&>);
static_assert(!invocable<lref_t, base&&> && !invocable<rref_t, base&>);
static_assert(!invocable<add_t, const base&, int>); // a non-const member on a const object

static_assert(same_result<value_t, base&> && same_noexcept<value_t, base&>);       // int&
static_assert(same_result<value_t, base&&> && same_noexcept<value_t, base&&>);     // int&&
static_assert(same_result<value_t, const derived&>);                               // const int&
static_assert(same_result<value_t, const base*> && same_noexcept<value_t, base*>); // const int&
static_assert(same_result<value_t, std::shared_ptr<derived>>);                     // int&
static_assert(std::is_same_v<fj::detail::invoke_result_t<value_t, base&&>, int&&>);
static_assert(!invocable<value_t, base&, int>); // a data member takes no arguments
static_assert(!invocable<get_t, int*>);         // an unrelated object
static_assert(!invocable<only_copy_callable, std::string>);

static_assert(fj::detail::invoke([](int x) { return x * 3; }, 4) == 12); // constexpr

// Empty-callable detection: pointers and std::function-like wrappers, nothing else.
struct explicit_bool_callable { // explicit operator bool, but no result_type: not a wrapper
    explicit operator bool() const { return false; }
    void operator()() const {}
};
static_assert(fj::detail::function_wrapper<std::function<void()>>);
static_assert(fj::detail::function_wrapper<std::function<int(int, double)>>);
static_assert(!fj::detail::function_wrapper<explicit_bool_callable>);
static_assert(!fj::detail::function_wrapper<only_copy_callable>);
static_assert(!fj::detail::function_wrapper<int (*)(int)>);
static_assert(!fj::detail::function_wrapper<std::reference_wrapper<std::function<void()>>>);

TEST(invoke_test, CallsLikeStdInvoke) {
    base b;
    derived d;
    const auto shared = std::make_shared<derived>();
    EXPECT_EQ(fj::detail::invoke(&base::get, b), 1);
    EXPECT_EQ(fj::detail::invoke(&base::add, d, 4), 5);
    EXPECT_EQ(fj::detail::invoke(&base::add, &d, 1), 6);
    EXPECT_EQ(fj::detail::invoke(&base::add, shared, 2), 3);
    EXPECT_EQ(fj::detail::invoke(static_cast<lref_t>(&base::by_ref), b), 10);
    EXPECT_EQ(fj::detail::invoke(static_cast<rref_t>(&base::by_ref), std::move(b)), 20);
    fj::detail::invoke(&base::value, d) = 42; // an lvalue: assignable
    EXPECT_EQ(d.value, 42);
    EXPECT_EQ(&fj::detail::invoke(&base::value, &d), &d.value);
    EXPECT_EQ(fj::detail::invoke(free_function, 21), 42);
    EXPECT_EQ(fj::detail::invoke(&free_function, 5), 10);
    EXPECT_EQ(fj::detail::invoke(throwing_callable{}, "hi"), "hi!");
    int calls = 0;
    auto mutable_lambda = [&calls]() mutable { return ++calls; };
    EXPECT_EQ(fj::detail::invoke(mutable_lambda), 1);
    EXPECT_EQ(fj::detail::invoke(mutable_lambda), 2);
}

TEST(invoke_test, PrvalueIsNotMoved) { // guaranteed elision, as fork's result slot relies on
    auto make = [] { return not_movable(7); };
    static_assert(std::is_same_v<fj::detail::invoke_result_t<decltype(make)&>, not_movable>);
    const not_movable x = fj::detail::invoke(make);
    EXPECT_EQ(x.value, 7);
    fj::detail::result_slot<not_movable> slot; // a task's result: constructed in place
    slot.run(make);
    EXPECT_FALSE(slot.failed());
}

TEST(invoke_test, SchedulerRunsPointersToMembers) {
    fj::scheduler sched(2);
    base b;
    b.value = 3;
    EXPECT_EQ(sched.submit([&] { return fj::detail::invoke(&base::get, b); }).get(), 3);
    auto f = sched.submit([] { return 5; }).then([](int x) { return x * 2; });
    EXPECT_EQ(f.get(), 10);
}

TEST(invoke_test, AlgorithmsTakePointersToMembers) {
    fj::scheduler sched(2);
    std::vector<derived> items(1000);
    fj::parallel_for_each(sched, items.begin(), items.end(), &base::get); // results discarded
    std::vector<base*> pointers;
    for (auto& item : items)
        pointers.push_back(&item);
    fj::parallel_for_each(sched, pointers.begin(), pointers.end(),
                          [](base* p) { fj::detail::invoke(&base::add, p, 1); });
    const long sum = fj::parallel_reduce(sched, items.begin(), items.end(), 0L, &base::value,
                                         [](long a, long x) { return a + x; });
    EXPECT_EQ(sum, 2000);
    const long via_pointers = fj::parallel_reduce(
        sched, pointers.begin(), pointers.end(), 0L, [](base* p) { return p->value; },
        std::plus<>{});
    EXPECT_EQ(via_pointers, 2000);
    std::vector<int> results(2);
    fj::parallel_invoke(
        sched, [&] { results[0] = 1; }, [&] { results[1] = 2; });
    EXPECT_EQ(results[0] + results[1], 3);
}

TEST(invoke_test, EmptyFunctionWrappersStillRejected) {
    fj::scheduler sched(1);
    std::function<void()> empty;
    EXPECT_THROW(sched.submit(empty), std::invalid_argument);
    // A class with its own explicit operator bool is not a function wrapper: it is called.
    EXPECT_NO_THROW(sched.submit(explicit_bool_callable{}).get());
}

} // namespace
