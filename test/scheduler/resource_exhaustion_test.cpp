// Resource exhaustion, simulated with the runtime's fault-injection hooks (running as root, a tiny
// RLIMIT_NPROC would not stop thread creation): a worker thread that cannot start, a task block
// that cannot be allocated, a deque that cannot grow. Each surfaces as a clean exception at the
// caller; no thread leaks; no task is lost or runs twice; the runtime works normally afterwards.
#include "support.hpp"

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkjoin/detail/fault_injection.hpp>

namespace {

namespace fi = fj::detail::fault_injection;

using fj_test::thread_count;

class resource_exhaustion_test : public fj_test::guarded_test {
protected:
    void TearDown() override { fi::disarm(); }
};

TEST_F(resource_exhaustion_test, a_worker_thread_that_cannot_start_fails_the_constructor_cleanly) {
    const int before = thread_count();
    fi::arm(fi::site::thread_start, /*skip=*/2, /*fail=*/1);
    try {
        fj::scheduler pool(4);
        ADD_FAILURE() << "the scheduler started although thread 3 could not";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("could not start worker thread 3 of 4"),
                  std::string::npos)
            << e.what();
    }
    fi::disarm();
    EXPECT_EQ(thread_count(), before); // the two started workers were joined
    fj::scheduler pool(4);             // and the next one starts normally
    EXPECT_EQ(pool.submit([] { return 1; }).get(), 1);
}

TEST_F(resource_exhaustion_test, a_submit_whose_task_cannot_be_allocated_throws_bad_alloc) {
    fj::scheduler pool(2);
    std::atomic<int> ran{0};
    fi::arm(fi::site::task_allocation, 0, 1);
    EXPECT_THROW((void)pool.submit([&] { ++ran; }), std::bad_alloc);
    fi::disarm();
    pool.submit([&] { ++ran; }).get();
    pool.shutdown();
    EXPECT_EQ(ran.load(), 1); // the refused one never ran, the accepted one ran once
}

TEST_F(resource_exhaustion_test, a_fork_that_cannot_allocate_loses_and_duplicates_nothing) {
    fj::scheduler pool(2);
    constexpr int k_children = 100;
    std::vector<std::atomic<int>> runs(k_children);
    auto parent = pool.submit([&] {
        std::vector<fj::future<void>> children;
        int refused_at = -1;
        fi::arm(fi::site::task_allocation, 50, 1);
        for (int i = 0; i < k_children; ++i) {
            try {
                children.push_back(fj::fork([&runs, i] { ++runs[static_cast<std::size_t>(i)]; }));
            } catch (const std::bad_alloc&) {
                refused_at = i;
            }
        }
        fi::disarm();
        for (auto& c : children)
            c.get();
        return refused_at;
    });
    EXPECT_EQ(fj_test::get_or(parent, -2), 50);
    for (int i = 0; i < k_children; ++i)
        EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), i == 50 ? 0 : 1) << "child " << i;
}

TEST_F(resource_exhaustion_test, a_deque_that_cannot_grow_refuses_the_fork_and_join) {
    fj::scheduler_options options;
    options.workers = 1;
    options.initial_deque_capacity = 2;
    fj::scheduler pool(options);
    std::atomic<int> ran{0};
    auto parent = pool.submit([&] {
        std::vector<fj::future<void>> children;
        fi::arm(fi::site::deque_growth, 0, 3);
        int refused = 0;
        for (int i = 0; i < 4; ++i) {
            try {
                children.push_back(fj::fork([&] { ++ran; }));
            } catch (const std::bad_alloc&) {
                ++refused;
            }
        }
        // A join that cannot push its second branch throws before running either branch.
        try {
            fj::join([&] { ++ran; }, [&] { ++ran; });
        } catch (const std::bad_alloc&) {
            refused += 10;
        }
        fi::disarm();
        for (auto& c : children)
            c.get();
        return refused;
    });
    // Capacity 2: forks 1 and 2 fit; forks 3 and 4 and the join's push need a bigger ring and
    // get none (three faults).
    EXPECT_EQ(fj_test::get_or(parent, -1), 2 + 10);
    EXPECT_EQ(ran.load(), 2); // the two accepted children, once each; neither join branch
}

TEST_F(resource_exhaustion_test, then_keeps_its_future_when_the_continuation_cannot_be_allocated) {
    fj::scheduler pool(2);
    auto f = pool.submit([] { return 20; });
    fi::arm(fi::site::task_allocation, 0, 1);
    EXPECT_THROW((void)f.then([](int x) { return x + 1; }), std::bad_alloc);
    fi::disarm();
    ASSERT_TRUE(f.valid()); // not consumed by the failed then()
    auto next = f.then([](int x) { return x + 1; });
    EXPECT_EQ(fj_test::get_or(next, -1), 21);
}

} // namespace
