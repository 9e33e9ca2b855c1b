// examples/asio_pi_server.hpp in this process on loopback, driven by 32 concurrent clients on the
// same single I/O thread while a 1 ms timer keeps firing there. Checked: every reply equals the
// serial computation; no computation ran on the I/O thread and every connection resumed there;
// the timer ticked while requests were being computed (the first computation waits for three
// such ticks, so a blocked I/O thread would hang it, which the deadline turns into a failure).
// Timer lateness is printed, not asserted: the machine may be loaded.
#include "asio_pi_server.hpp"
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr int k_clients = 32;
constexpr int k_requests = 4; // per client, plus one malformed request

struct request {
    std::string line;     // without '\n'
    std::string expected; // the reply, without '\n'
};

// Client `id`'s requests: positions below 2,000, 1 to 16 digits, the answers computed serially;
// the last one is malformed and its answer is the computation's exception.
std::vector<request> requests_of(int id) {
    std::vector<request> out;
    fj_test::rng random(static_cast<std::uint64_t>(id) + 1);
    for (int r = 0; r < k_requests; ++r) {
        const std::uint64_t from = random.below(2000);
        const std::uint64_t count = 1 + random.below(16);
        std::string digits;
        for (std::uint64_t i = 0; i < count; ++i)
            digits += bbp::hex_char(bbp::hex_digit_of_pi(from + i));
        out.push_back({"pi " + std::to_string(from) + " " + std::to_string(count), digits});
    }
    out.push_back({"pi " + std::to_string(id), "error: expected 'pi <from> <count>'"});
    return out;
}

struct run_state {
    int clients_left = k_clients;
    int in_flight = 0; // requests written and not yet answered
    std::vector<std::string> wrong;
    int replies = 0;
    long ticks = 0;
    std::atomic<long> ticks_in_flight{0};
    std::chrono::steady_clock::duration max_lateness{};
    bool stopping = false; // set by the last client: cancel() misses a tick already queued
};

asio::awaitable<void> client(tcp::endpoint server, std::vector<request> requests, run_state& state,
                             tcp::acceptor& acceptor, asio::steady_timer& ticker) {
    tcp::socket socket(co_await asio::this_coro::executor);
    co_await socket.async_connect(server, asio::use_awaitable);
    std::string buffer;
    for (const request& r : requests) {
        const std::string line = r.line + "\n";
        ++state.in_flight;
        co_await asio::async_write(socket, asio::buffer(line), asio::use_awaitable);
        const std::size_t n = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer),
                                                              '\n', asio::use_awaitable);
        --state.in_flight;
        const std::string reply = buffer.substr(0, n - 1);
        buffer.erase(0, n);
        ++state.replies;
        if (reply != r.expected)
            state.wrong.push_back(r.line + " -> " + reply + " (expected " + r.expected + ")");
    }
    if (--state.clients_left == 0) {
        state.stopping = true;
        acceptor.close();
        ticker.cancel();
    }
}

asio::awaitable<void> tick(asio::steady_timer& ticker, run_state& state) {
    while (!state.stopping) {
        const auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
        ticker.expires_at(due);
        try {
            co_await ticker.async_wait(asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            co_return; // cancelled: the clients are done
        }
        state.max_lateness = std::max(state.max_lateness, std::chrono::steady_clock::now() - due);
        ++state.ticks;
        if (state.in_flight > 0)
            state.ticks_in_flight.fetch_add(1);
    }
}

class asio_server : public fj_test::guarded_test {};

TEST_F(asio_server, concurrent_clients_get_correct_replies_while_the_io_thread_stays_free) {
    std::vector<std::vector<request>> requests;
    for (int id = 0; id < k_clients; ++id)
        requests.push_back(requests_of(id));

    // The io_context first: the pool is destroyed before it, after its last computation has
    // posted its completion there.
    asio::io_context io(1);
    fj::scheduler pool(2);
    const std::thread::id io_thread = std::this_thread::get_id();
    run_state state;

    std::mutex compute_mutex;
    std::set<std::thread::id> compute_threads; // guarded by compute_mutex
    std::atomic<bool> gate_passed{false};
    std::atomic<bool> first{true};
    int replies_off_io_thread = 0; // I/O thread only
    pi_server::observer watch;
    watch.on_compute = [&] {
        {
            std::lock_guard lock(compute_mutex);
            compute_threads.insert(std::this_thread::get_id());
        }
        // The first computation holds its request in flight until the I/O thread has ticked
        // three times meanwhile.
        if (first.exchange(false))
            gate_passed = fj_test::spin_until([&] { return state.ticks_in_flight.load() >= 3; });
    };
    watch.on_reply = [&] {
        if (std::this_thread::get_id() != io_thread)
            ++replies_off_io_thread;
    };

    tcp::acceptor acceptor = pi_server::listen_on_loopback(io, 0);
    const tcp::endpoint endpoint = acceptor.local_endpoint();
    asio::steady_timer ticker(io);
    asio::co_spawn(io, pi_server::accept_loop(acceptor, pool, watch), asio::detached);
    asio::co_spawn(io, tick(ticker, state), asio::detached);
    for (int id = 0; id < k_clients; ++id)
        asio::co_spawn(
            io, client(endpoint, requests[static_cast<std::size_t>(id)], state, acceptor, ticker),
            asio::detached);

    // Returns when every coroutine has ended (the clients, then the acceptor, the timer and the
    // connections), or at the deadline.
    io.run_for(fj_test::k_deadline);
    const bool stopped = io.stopped();
    if (!stopped) // the deadline: stop what is left so that the destructors do not wait on it
        acceptor.close();

    std::printf("%d replies, %ld timer ticks (%ld while requests were in flight), latest tick "
                "%.3f ms late\n",
                state.replies, state.ticks, state.ticks_in_flight.load(),
                std::chrono::duration<double, std::milli>(state.max_lateness).count());
    ASSERT_TRUE(stopped) << "the clients did not finish within " << fj_test::k_deadline.count()
                         << " s";
    EXPECT_EQ(state.clients_left, 0);
    EXPECT_EQ(state.replies, k_clients * (k_requests + 1));
    EXPECT_TRUE(state.wrong.empty())
        << state.wrong.size()
        << " wrong, the first: " << (state.wrong.empty() ? "" : state.wrong.front());
    EXPECT_TRUE(gate_passed.load()) << "the timer did not tick while a request was computed";
    EXPECT_GE(state.ticks_in_flight.load(), 3);
    EXPECT_EQ(replies_off_io_thread, 0);
    std::lock_guard lock(compute_mutex);
    EXPECT_FALSE(compute_threads.empty());
    EXPECT_EQ(compute_threads.count(io_thread), 0u) << "a computation ran on the I/O thread";
}

} // namespace
