// A TCP server on 127.0.0.1 whose requests are computed by forkjoin (examples/asio_pi_server.hpp):
// one Asio I/O thread runs every connection as a coroutine, and each request's work runs on the
// forkjoin pool through fj::asio::async_run, so the I/O thread never computes nor waits.
//
//   asio_server [--port P] [--workers W]
//       serves until SIGINT or SIGTERM; from bash, for example:
//       exec 3<>/dev/tcp/127.0.0.1/P; printf 'pi 0 32\n' >&3; head -1 <&3
//   asio_server --self-test [--clients C] [--requests R] [--workers W]
//       starts the server on a free port, connects C clients (coroutines on the same I/O thread)
//       that send R requests each, plus one malformed one, and checks every reply against the
//       table of pi's digits (examples/pi_hex_digits.hpp). Meanwhile a 1 ms timer ticks on the
//       I/O thread. Exits 1 if a reply is wrong, a computation ran on the I/O thread, or the timer
//       never ticked while requests were being computed.
//
// Needs Boost.Asio's coroutines: built by g++ (cmake/asio-coroutines.cmake).
#include "asio_pi_server.hpp"
#include "cli.hpp"
#include "pi_hex_digits.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <forkjoin/forkjoin.hpp>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

struct self_test_state {
    int clients_left = 0;
    int in_flight = 0; // requests sent and not yet answered, all clients together
    long answers = 0;
    long wrong = 0;
    long ticks = 0;
    long ticks_in_flight = 0; // timer ticks while a request was being computed
    std::atomic<long> computed_on_io_thread{0};
    bool stopping = false;
};

// Position and length of client `id`'s request `r`: spread over the table, 1 to 32 digits.
std::uint64_t request_from(int id, int r) {
    return (static_cast<std::uint64_t>(id) * 7919 + static_cast<std::uint64_t>(r) * 104729) % 9000;
}
std::uint64_t request_count(int id, int r) {
    return 1 + static_cast<std::uint64_t>(id + 3 * r) % 32;
}

asio::awaitable<void> client(tcp::endpoint server, int id, int requests, self_test_state& state,
                             tcp::acceptor& acceptor, asio::steady_timer& ticker) {
    tcp::socket socket(co_await asio::this_coro::executor);
    co_await socket.async_connect(server, asio::use_awaitable);
    std::string buffer;
    // The requests, then a malformed one, whose reply is the computation's exception.
    for (int r = 0; r <= requests; ++r) {
        std::string request, expected;
        if (r < requests) {
            const std::uint64_t from = request_from(id, r), count = request_count(id, r);
            request = "pi " + std::to_string(from) + " " + std::to_string(count) + "\n";
            expected = std::string(pi_table::k_hex_digits.substr(from, count));
        } else {
            request = "pi " + std::to_string(id) + "\n";
            expected = "error: expected 'pi <from> <count>'";
        }
        ++state.in_flight;
        co_await asio::async_write(socket, asio::buffer(request), asio::use_awaitable);
        const std::size_t n = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer),
                                                              '\n', asio::use_awaitable);
        --state.in_flight;
        const std::string reply = buffer.substr(0, n - 1);
        buffer.erase(0, n);
        ++state.answers;
        if (reply != expected) {
            ++state.wrong;
            std::printf("WRONG: client %d sent '%.*s', got '%s', expected '%s'\n", id,
                        static_cast<int>(request.size() - 1), request.c_str(), reply.c_str(),
                        expected.c_str());
        }
    }
    if (--state.clients_left == 0) { // the last client: stop listening and ticking
        state.stopping = true;
        acceptor.close();
        ticker.cancel();
    }
}

asio::awaitable<void> tick_every_millisecond(asio::steady_timer& ticker, self_test_state& state) {
    while (!state.stopping) {
        ticker.expires_after(std::chrono::milliseconds(1));
        try {
            co_await ticker.async_wait(asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            co_return; // cancelled by the last client
        }
        ++state.ticks;
        if (state.in_flight > 0)
            ++state.ticks_in_flight;
    }
}

int self_test(fj::scheduler& pool, int clients, int requests) {
    asio::io_context io(1);
    tcp::acceptor acceptor = pi_server::listen_on_loopback(io, 0);
    const tcp::endpoint endpoint = acceptor.local_endpoint();
    std::printf("asio_server: listening on 127.0.0.1:%u (self-test)\n",
                static_cast<unsigned>(endpoint.port()));

    self_test_state state;
    state.clients_left = clients;
    const std::thread::id io_thread = std::this_thread::get_id();
    pi_server::observer watch;
    watch.on_compute = [&state, io_thread] {
        if (std::this_thread::get_id() == io_thread)
            state.computed_on_io_thread.fetch_add(1);
    };

    asio::steady_timer ticker(io);
    asio::co_spawn(io, pi_server::accept_loop(acceptor, pool, watch), asio::detached);
    asio::co_spawn(io, tick_every_millisecond(ticker, state), asio::detached);
    for (int id = 0; id < clients; ++id)
        asio::co_spawn(io, client(endpoint, id, requests, state, acceptor, ticker), asio::detached);
    // Returns once every client is done, the acceptor closed, the timer stopped and every
    // connection ended: the coroutines hold no more work.
    io.run();

    const long expected_answers = static_cast<long>(clients) * (requests + 1);
    std::printf("self-test: %ld replies to %d clients, %ld wrong; computations on the I/O "
                "thread: %ld; timer ticks: %ld, %ld of them while requests were in flight\n",
                state.answers, clients, state.wrong, state.computed_on_io_thread.load(),
                state.ticks, state.ticks_in_flight);
    if (state.answers != expected_answers || state.wrong != 0 ||
        state.computed_on_io_thread.load() != 0 || state.ticks_in_flight == 0) {
        std::printf("WRONG: expected %ld correct replies, none computed on the I/O thread, and "
                    "ticks while requests were in flight\n",
                    expected_answers);
        return 1;
    }
    std::printf("self-test: every reply matched the table\n");
    return 0;
}

int serve(fj::scheduler& pool, std::uint16_t port) {
    asio::io_context io(1);
    tcp::acceptor acceptor = pi_server::listen_on_loopback(io, port);
    std::printf("asio_server: listening on 127.0.0.1:%u; requests: pi <from> <count>\n",
                static_cast<unsigned>(acceptor.local_endpoint().port()));
    std::fflush(stdout);
    const pi_server::observer watch;
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
    asio::co_spawn(io, pi_server::accept_loop(acceptor, pool, watch), asio::detached);
    io.run();
    std::printf("asio_server: stopped\n");
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    cli::program() = {"asio_server", "asio_server [--port P] [--workers W] | asio_server "
                                     "--self-test [--clients C] [--requests R] [--workers W]"};
    bool test = false;
    std::uint16_t port = 0;
    int clients = 8, requests = 8;
    std::size_t workers = 0;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--self-test") == 0)
            test = true;
        else if (std::strcmp(argv[i], "--port") == 0 && has_value)
            port = cli::parse<std::uint16_t>(argv[++i], 0, 65535, "--port");
        else if (std::strcmp(argv[i], "--clients") == 0 && has_value)
            clients = cli::parse<int>(argv[++i], 1, 1000, "--clients");
        else if (std::strcmp(argv[i], "--requests") == 0 && has_value)
            requests = cli::parse<int>(argv[++i], 1, 100000, "--requests");
        else if (std::strcmp(argv[i], "--workers") == 0 && has_value)
            workers = cli::parse<std::size_t>(argv[++i], 1, fj::scheduler_options::max_workers,
                                              "--workers");
        else
            cli::usage(std::string("unknown or incomplete option '") + argv[i] + "'");
    }

    std::unique_ptr<fj::scheduler> own;
    if (workers > 0)
        own = std::make_unique<fj::scheduler>(workers);
    fj::scheduler& pool = own ? *own : fj::default_scheduler();
    return test ? self_test(pool, clients, requests) : serve(pool, port);
}
