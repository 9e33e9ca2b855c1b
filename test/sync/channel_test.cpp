// fj::channel: producers and consumers at several capacities, close, the try forms.
#include "sync/sync_support.hpp"

#include <atomic>
#include <optional>
#include <vector>

#include <forkjoin/channel.hpp>
#include <forkjoin/errors.hpp>

namespace {

class fj_channel_capacity : public ::testing::TestWithParam<int> {
    fj_test::watchdog m_dog{fj_test::current_test_name()};
};

TEST_P(fj_channel_capacity, every_value_sent_is_received_once_in_each_sender_s_order) {
    fj::scheduler pool(2);
    fj::channel<int> ch(static_cast<std::size_t>(GetParam()));
    constexpr int k_senders = 3;
    constexpr int k_each = 200;
    std::vector<fj::future<void>> senders;
    for (int s = 0; s < k_senders; ++s)
        senders.push_back(pool.submit([&, s] {
            for (int i = 0; i < k_each; ++i)
                ch.send(s * k_each + i);
        }));
    std::atomic<int> out_of_order{0};
    std::vector<fj::future<std::vector<int>>> receivers;
    for (int r = 0; r < 2; ++r)
        receivers.push_back(pool.submit([&] {
            std::vector<int> got;
            std::vector<int> last(k_senders, -1);
            while (std::optional<int> v = ch.receive()) {
                const int s = *v / k_each;
                if (*v <= last[static_cast<std::size_t>(s)])
                    out_of_order.fetch_add(1);
                last[static_cast<std::size_t>(s)] = *v;
                got.push_back(*v);
            }
            return got;
        }));
    for (auto& s : senders)
        EXPECT_TRUE(fj_test::get_void(s));
    ch.close();
    std::vector<int> seen(k_senders * k_each, 0);
    for (auto& r : receivers)
        for (int v : fj_test::get_or(r, std::vector<int>{}))
            ++seen[static_cast<std::size_t>(v)];
    for (int n : seen)
        EXPECT_EQ(n, 1);
    EXPECT_EQ(out_of_order.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(capacities, fj_channel_capacity, ::testing::Values(0, 1, 4));

TEST(fj_channel, close_releases_waiting_receivers_empty_and_waiting_senders_with_an_error) {
    fj::scheduler pool(2);
    fj::channel<int> empty(1);
    std::vector<fj::future<std::optional<int>>> receivers;
    for (int i = 0; i < 3; ++i)
        receivers.push_back(pool.submit([&] { return empty.receive(); }));
    fj::channel<int> full(0);
    fj::future<void> sender = pool.submit([&] { full.send(7); });
    if (fj_test::parks(pool))
        fj_test::expect_parks_reach(pool, 4);
    empty.close();
    full.close();
    for (auto& r : receivers)
        EXPECT_FALSE(fj_test::get_or(r, std::optional<int>(0)).has_value());
    EXPECT_TRUE(fj_test::wait_ready(sender));
    // The sender either was waiting (released by close) or came after it: closed either way.
    EXPECT_THROW(sender.get(), fj::channel_closed);
    EXPECT_THROW(empty.send(1), fj::channel_closed);
    EXPECT_THROW(empty.close(), fj::channel_closed);
    EXPECT_TRUE(empty.is_closed());
}

TEST(fj_channel, values_buffered_before_close_are_still_received) {
    fj::channel<int> ch(2);
    ch.send(1);
    ch.send(2);
    EXPECT_FALSE(ch.try_send(3)); // full
    ch.close();
    EXPECT_EQ(ch.receive(), std::optional<int>(1));
    EXPECT_EQ(ch.try_receive(), std::optional<int>(2));
    EXPECT_EQ(ch.receive(), std::nullopt);
    EXPECT_EQ(ch.try_receive(), std::nullopt);
}

TEST(fj_channel, the_try_forms_never_wait) {
    fj::channel<int> unbuffered(0);
    EXPECT_FALSE(unbuffered.try_send(1)); // nobody receives
    EXPECT_EQ(unbuffered.try_receive(), std::nullopt);
    EXPECT_FALSE(unbuffered.is_closed());
    fj::channel<int> one(1);
    const int value = 5;
    EXPECT_TRUE(one.try_send(value));
    EXPECT_EQ(one.try_receive(), std::optional<int>(5));
}

} // namespace
