// fj::detail::chase_lev_deque: owner LIFO, thief FIFO, growth from the smallest ring, and
// exactly-once delivery when thieves race the owner.
#include "support.hpp"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <forkjoin/detail/chase_lev_deque.hpp>

namespace {

using fj::detail::chase_lev_deque;
using fj::detail::steal_result;

using deque_t = chase_lev_deque<int*>;

// Items are addresses into one array, so an item's value is its push index.
struct items {
    explicit items(std::size_t n) : values(n) {
        for (std::size_t i = 0; i < n; ++i)
            values[i] = static_cast<int>(i);
    }
    int* operator[](std::size_t i) { return &values[i]; }
    std::vector<int> values;
};

int* steal_one(deque_t& d) {
    int* out = nullptr;
    const steal_result r = d.steal(out);
    return r == steal_result::success ? out : nullptr;
}

class deque_test : public fj_test::guarded_test {};

// The owner takes the newest item first (LIFO), and an emptied deque pops nullptr.
TEST_F(deque_test, OwnerPopsNewestFirst) {
    items it(5);
    deque_t d(8);
    for (int i = 0; i < 5; ++i)
        d.push(it[i]);
    for (int i = 4; i >= 0; --i) {
        int* p = d.pop();
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(*p, i);
    }
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_EQ(d.pop(), nullptr); // a failed pop leaves the deque consistent
}

// Thieves take the oldest item first (FIFO), and an emptied deque reports `empty`.
TEST_F(deque_test, ThiefStealsOldestFirst) {
    items it(5);
    deque_t d(8);
    for (int i = 0; i < 5; ++i)
        d.push(it[i]);
    for (int i = 0; i < 5; ++i) {
        int* out = nullptr;
        ASSERT_EQ(d.steal(out), steal_result::success);
        EXPECT_EQ(*out, i);
    }
    int* out = nullptr;
    EXPECT_EQ(d.steal(out), steal_result::empty);
    EXPECT_EQ(out, nullptr);
}

// Pops and steals take from opposite ends and never hand out the same item twice.
TEST_F(deque_test, PopAndStealWorkOppositeEnds) {
    items it(4);
    deque_t d(4);
    for (int i = 0; i < 4; ++i)
        d.push(it[i]);
    EXPECT_EQ(*steal_one(d), 0);
    EXPECT_EQ(*d.pop(), 3);
    EXPECT_EQ(*steal_one(d), 1);
    EXPECT_EQ(*d.pop(), 2); // the last item, taken by the owner through the CAS path
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_EQ(steal_one(d), nullptr);
    // The deque is reusable after being emptied from both ends.
    d.push(it[0]);
    EXPECT_EQ(d.size_hint(), 1u);
    EXPECT_EQ(*steal_one(d), 0);
}

// The capacity is a power of two of at least 2, rounding the request up.
TEST_F(deque_test, CapacityRoundsUpToPowerOfTwo) {
    EXPECT_EQ(deque_t(0).capacity(), 2u);
    EXPECT_EQ(deque_t(1).capacity(), 2u);
    EXPECT_EQ(deque_t(2).capacity(), 2u);
    EXPECT_EQ(deque_t(3).capacity(), 4u);
    EXPECT_EQ(deque_t(256).capacity(), 256u);
    EXPECT_EQ(deque_t(257).capacity(), 512u);
}

// size_hint() tracks pushes, pops and steals when nothing runs concurrently.
TEST_F(deque_test, SizeHintIsExactWhenQuiet) {
    items it(10);
    deque_t d(2);
    EXPECT_EQ(d.size_hint(), 0u);
    EXPECT_TRUE(d.empty_hint());
    for (int i = 0; i < 10; ++i)
        d.push(it[i]);
    EXPECT_EQ(d.size_hint(), 10u);
    d.pop();
    steal_one(d);
    EXPECT_EQ(d.size_hint(), 8u);
    while (d.pop() != nullptr) {
    }
    EXPECT_TRUE(d.empty_hint());
}

// Growing from capacity 2 keeps every item and both orders: thieves still see push order and
// the owner still sees reverse push order.
TEST_F(deque_test, GrowthFromCapacityTwoPreservesOrder) {
    constexpr int n = 1000;
    items it(n);
    deque_t d(2);
    ASSERT_EQ(d.capacity(), 2u);
    for (int i = 0; i < n; ++i)
        d.push(it[i]);
    EXPECT_GE(d.capacity(), static_cast<std::size_t>(n));
    EXPECT_EQ(d.size_hint(), static_cast<std::size_t>(n));
    for (int i = 0; i < n / 2; ++i)
        ASSERT_EQ(*steal_one(d), i);
    for (int i = n - 1; i >= n / 2; --i)
        ASSERT_EQ(*d.pop(), i);
    EXPECT_EQ(d.pop(), nullptr);
}

// Growth while the live items wrap around the end of the ring (top > 0) copies them in order.
TEST_F(deque_test, GrowthWithWrappedItemsPreservesOrder) {
    items it(64);
    deque_t d(2);
    int next_push = 0;
    int next_steal = 0;
    // Advance top so the live window straddles the ring's end before each growth.
    for (int round = 0; round < 20; ++round) {
        d.push(it[next_push++]);
        d.push(it[next_push++]);
        d.push(it[next_push++]); // grows with top != 0 from the second round on
        ASSERT_EQ(*steal_one(d), next_steal++);
        ASSERT_EQ(*steal_one(d), next_steal++);
        if (next_push >= 60)
            break;
    }
    while (int* p = steal_one(d))
        ASSERT_EQ(*p, next_steal++);
    EXPECT_EQ(next_steal, next_push);
}

// Exactly once, concurrently: with 3 thieves racing an owner that pushes and pops at the same
// time, every pushed item is taken by exactly one pop() or steal(), from the smallest ring.
class deque_race_test : public ::testing::TestWithParam<std::size_t> {
    fj_test::watchdog m_dog{fj_test::current_test_name()};
};

TEST_P(deque_race_test, ThreeThievesAndOwnerTakeEachItemExactlyOnce) {
    const std::size_t n = fj_test::scaled(200'000);
    constexpr int thieves = 3;
    items it(n);
    std::vector<std::atomic<int>> taken(n);
    deque_t d(GetParam());
    std::atomic<bool> owner_done{false};
    std::atomic<std::size_t> stolen{0};

    const auto take = [&](int* p) {
        taken[static_cast<std::size_t>(*p)].fetch_add(1, std::memory_order_relaxed);
    };

    std::vector<std::thread> threads;
    for (int t = 0; t < thieves; ++t) {
        threads.emplace_back([&] {
            for (;;) {
                int* out = nullptr;
                const steal_result r = d.steal(out);
                if (r == steal_result::success) {
                    take(out);
                    stolen.fetch_add(1, std::memory_order_relaxed);
                } else if (r == steal_result::empty && owner_done.load(std::memory_order_acquire)) {
                    return;
                } else if (r == steal_result::empty) {
                    std::this_thread::yield();
                }
            }
        });
    }

    fj_test::rng random(GetParam());
    std::size_t pushed = 0;
    while (pushed < n) {
        // Bursts of 0..3 pushes then 0..3 pops keep the deque near empty, where pop() and steal()
        // fight over the last item, and occasionally let it grow past the ring.
        const std::size_t burst = 1 + random.below(4);
        for (std::size_t i = 0; i < burst && pushed < n; ++i)
            d.push(it[pushed++]);
        const std::size_t pops = random.below(4);
        for (std::size_t i = 0; i < pops; ++i)
            if (int* p = d.pop())
                take(p);
    }
    while (int* p = d.pop())
        take(p);
    owner_done.store(true, std::memory_order_release);
    for (auto& t : threads)
        t.join();

    std::size_t missing = 0;
    std::size_t duplicated = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int c = taken[i].load();
        missing += c == 0;
        duplicated += c > 1;
    }
    EXPECT_EQ(missing, 0u) << "items never taken";
    EXPECT_EQ(duplicated, 0u) << "items taken more than once";
    EXPECT_TRUE(d.empty_hint());
    RecordProperty("stolen", static_cast<int>(stolen.load()));
}

INSTANTIATE_TEST_SUITE_P(Capacity, deque_race_test,
                         ::testing::Values(std::size_t{2}, std::size_t{256}),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                             return "capacity_" + std::to_string(info.param);
                         });

} // namespace
