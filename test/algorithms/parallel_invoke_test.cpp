// fj::parallel_invoke: every callable runs once for any count, in parallel where possible;
// exceptions (the lowest-numbered wins); off the pool and nested.
#include "support.hpp"

#include <atomic>
#include <stdexcept>

namespace {

class parallel_invoke_test : public fj_test::workers_test {};

TEST_P(parallel_invoke_test, runs_each_callable_exactly_once) {
    fj::scheduler pool(workers());
    std::atomic<int> a{0}, b{0}, c{0}, d{0}, e{0};
    fj::parallel_invoke(pool);
    fj::parallel_invoke(pool, [&] { ++a; });
    EXPECT_EQ(a.load(), 1);
    fj::parallel_invoke(
        pool, [&] { ++a; }, [&] { ++b; });
    EXPECT_EQ(a.load() + b.load(), 3);
    fj::parallel_invoke(
        pool, [&] { ++a; }, [&] { ++b; }, [&] { ++c; }, [&] { ++d; }, [&] { ++e; });
    EXPECT_EQ(a.load() + b.load() + c.load() + d.load() + e.load(), 8);
    // Callables returning values (discarded), mutable lambdas, function pointers.
    static std::atomic<int> by_pointer;
    by_pointer = 0;
    void (*fp)() = [] { ++by_pointer; };
    int counter = 0;
    fj::parallel_invoke(
        pool, [] { return 5; }, [counter]() mutable { ++counter; }, fp);
    EXPECT_EQ(by_pointer.load(), 1);
}

TEST_P(parallel_invoke_test, the_lowest_numbered_exception_wins) {
    fj::scheduler pool(workers());
    std::atomic<int> ran{0};
    try {
        fj::parallel_invoke(
            pool, [&] { ++ran; }, [&] { throw std::runtime_error("second"); }, [&] { ++ran; },
            [&] { throw std::logic_error("fourth"); });
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "second");
    }
    EXPECT_GE(ran.load(), 1); // the first always runs; the third may have been skipped
    EXPECT_THROW(fj::parallel_invoke(pool, [] { throw 7; }), int);
}

TEST_P(parallel_invoke_test, nests_and_runs_in_parallel_when_there_are_workers) {
    fj::scheduler pool(workers());
    std::atomic<int> leaves{0};
    auto leaf = [&] { ++leaves; };
    fj::parallel_invoke(
        pool, [&] { fj::parallel_invoke(leaf, leaf, leaf); },
        [&] { fj::parallel_invoke(leaf, leaf); });
    EXPECT_EQ(leaves.load(), 5);
    if (workers() < 2)
        return;
    // Two callables that each wait for the other: completes only if they run at the same time.
    std::atomic<bool> first{false}, second{false};
    fj::parallel_invoke(
        pool,
        [&] {
            first = true;
            EXPECT_TRUE(fj_test::spin_until([&] { return second.load(); }));
        },
        [&] {
            second = true;
            EXPECT_TRUE(fj_test::spin_until([&] { return first.load(); }));
        });
}

TEST(parallel_invoke_bad_input, null_callables_are_rejected) {
    void (*null_fn)() = nullptr;
    EXPECT_THROW(fj::parallel_invoke([] {}, null_fn), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(workers, parallel_invoke_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
