// The Asio pi server (examples/asio_pi_server.hpp) under 64 concurrent clients: how late the I/O
// thread's 1 ms timer fires while a 2-worker pool computes the requests
// (docs/performance.md#asio-clients).
//
// The server runs on this thread's io_context: the accept loop, a coroutine per connection, and a
// 1 ms steady_timer whose lateness (the time it fired minus its expiry) is recorded at every
// tick. The clients are coroutines on a second thread's io_context, so the server's I/O thread
// serves nothing else. Each client sends "pi <from> 8" requests one after the other until the
// run's time is up, and checks every reply against the table of pi's digits; <from> is spread
// over 960..1039, where 8 digits take about 1 ms of one core (measured first, and printed).
//
//   asio_clients [--clients 64] [--workers 2] [--seconds 3]      (--clients 0: the timer alone)
// Prints the requests done, wrong answers, timer ticks and the lateness's median, p99 and max,
// the clients' round trips, and the load average. Exits 1 on a wrong answer or no answer at all.
// Needs Boost.Asio's coroutines: built by g++ (cmake/asio-coroutines.cmake).
#include "asio_pi_server.hpp"
#include "measure.hpp"
#include "pi_hex_digits.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <forkjoin/forkjoin.hpp>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

constexpr std::uint64_t k_count = 8; // digits per request

std::uint64_t request_from(int id, long r) {
    return 960 + (static_cast<std::uint64_t>(id) * 37 + static_cast<std::uint64_t>(r) * 11) % 80;
}

// One request's digits on one core, without the server: the computation a request asks for.
double serial_request_ms(std::uint64_t from) {
    int sink = 0;
    const double s = fj_perf::seconds_of([&] {
        for (std::uint64_t i = 0; i < k_count; ++i)
            sink += bbp::hex_digit_of_pi(from + i);
    });
    if (sink < 0)
        std::printf("unreachable\n");
    return s * 1e3;
}

// Touched by the clients' thread only, until it is joined.
struct client_state {
    int left = 0;
    long answers = 0;
    long wrong = 0;
    std::vector<double> round_trip_ms;
};

asio::awaitable<void> client(tcp::endpoint server, int id, clock_type::time_point deadline,
                             client_state& state, asio::io_context& server_io,
                             tcp::acceptor& acceptor, asio::steady_timer& ticker, bool& stopping) {
    tcp::socket socket(co_await asio::this_coro::executor);
    co_await socket.async_connect(server, asio::use_awaitable);
    std::string buffer;
    for (long r = 0; clock_type::now() < deadline; ++r) {
        const std::uint64_t from = request_from(id, r);
        const std::string request = "pi " + std::to_string(from) + " " + std::to_string(k_count);
        const auto t0 = clock_type::now();
        co_await asio::async_write(socket, asio::buffer(request + "\n"), asio::use_awaitable);
        const std::size_t n = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer),
                                                              '\n', asio::use_awaitable);
        state.round_trip_ms.push_back(
            std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
        const std::string reply = buffer.substr(0, n - 1);
        buffer.erase(0, n);
        ++state.answers;
        if (reply != pi_table::k_hex_digits.substr(from, k_count)) {
            ++state.wrong;
            std::printf("WRONG: client %d sent '%s', got '%s'\n", id, request.c_str(),
                        reply.c_str());
        }
    }
    socket.close(); // the server's connection coroutine sees eof and ends
    if (--state.left == 0)
        // On the server's thread: stop listening and ticking. Pointers, as this frame ends first.
        asio::post(server_io, [a = &acceptor, t = &ticker, s = &stopping] {
            *s = true;
            a->close();
            t->cancel();
        });
}

asio::awaitable<void> tick(asio::steady_timer& ticker, const bool& stopping,
                           std::vector<double>& lateness_ms) {
    while (!stopping) {
        ticker.expires_after(std::chrono::milliseconds(1));
        try {
            co_await ticker.async_wait(asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            co_return; // cancelled by the last client
        }
        lateness_ms.push_back(
            std::chrono::duration<double, std::milli>(clock_type::now() - ticker.expiry()).count());
    }
}

// This thread's time waiting on a run queue, runnable but not running, in ms
// (/proc/thread-self/schedstat: time on the CPU, time waiting, time slices; ns). -1 if unreadable.
// A late timer with a long wait was the kernel's scheduling, not work on the I/O thread.
double run_queue_wait_ms() {
    std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
    if (f == nullptr)
        return -1;
    unsigned long long on_cpu = 0, waiting = 0;
    const bool ok = std::fscanf(f, "%llu %llu", &on_cpu, &waiting) == 2;
    std::fclose(f);
    return ok ? static_cast<double>(waiting) * 1e-6 : -1;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

} // namespace

int main(int argc, char** argv) {
    int clients = 64;
    std::size_t workers = 2;
    double seconds = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--clients") == 0)
            clients = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--workers") == 0)
            workers = static_cast<std::size_t>(std::atol(argv[i + 1]));
        else if (std::strcmp(argv[i], "--seconds") == 0)
            seconds = std::atof(argv[i + 1]);
    }
    std::vector<double> serial_ms;
    for (int id = 0; id < 16; ++id)
        serial_ms.push_back(serial_request_ms(request_from(id, 0)));
    std::printf(
        "asio_clients: %d clients, %zu workers, %.1f s; a request: %llu digits at 960..1039, "
        "%.2f ms of one core (median of 16, serial); load average %s\n",
        clients, workers, seconds, static_cast<unsigned long long>(k_count),
        fj_perf::median(serial_ms), fj_perf::load_average().c_str());

    fj::scheduler pool(workers);
    asio::io_context server_io(1);
    tcp::acceptor acceptor = pi_server::listen_on_loopback(server_io, 0);
    const tcp::endpoint endpoint = acceptor.local_endpoint();
    asio::steady_timer ticker(server_io);
    bool stopping = false; // the server thread's
    std::vector<double> lateness_ms;
    const pi_server::observer watch;
    asio::co_spawn(server_io, pi_server::accept_loop(acceptor, pool, watch), asio::detached);
    asio::co_spawn(server_io, tick(ticker, stopping, lateness_ms), asio::detached);

    client_state state;
    state.left = clients;
    asio::io_context client_io(1);
    const auto deadline = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                                  std::chrono::duration<double>(seconds));
    for (int id = 0; id < clients; ++id)
        asio::co_spawn(client_io,
                       client(endpoint, id, deadline, state, server_io, acceptor, ticker, stopping),
                       asio::detached);
    // No clients (the idle timer, for comparison): the run's end stops the server instead.
    asio::steady_timer end_of_run(server_io, deadline);
    if (clients == 0)
        end_of_run.async_wait([&](const boost::system::error_code&) {
            stopping = true;
            acceptor.close();
            ticker.cancel();
        });
    const fj_perf::interference_meter meter; // other processes' CPU use during the run
    const auto t0 = clock_type::now();
    const double wait_before = run_queue_wait_ms();
    std::thread client_thread([&] { client_io.run(); });
    server_io.run(); // until the last client has stopped the server and every connection ended
    const double io_wait_ms = run_queue_wait_ms() - wait_before;
    client_thread.join();
    const double wall = std::chrono::duration<double>(clock_type::now() - t0).count();

    std::printf("requests done %ld (%.0f/s), wrong answers %ld; round trip ms: median %.2f, p99 "
                "%.2f, max %.2f\n",
                state.answers, static_cast<double>(state.answers) / wall, state.wrong,
                percentile(state.round_trip_ms, 0.5), percentile(state.round_trip_ms, 0.99),
                percentile(state.round_trip_ms, 1));
    std::printf("timer ticks %zu; lateness ms: median %.3f, p99 %.3f, max %.3f (%s 2 ms)\n",
                lateness_ms.size(), percentile(lateness_ms, 0.5), percentile(lateness_ms, 0.99),
                percentile(lateness_ms, 1), percentile(lateness_ms, 1) <= 2 ? "within" : "OVER");
    std::printf("the I/O thread waited %.1f ms on a run queue in all (runnable, not running)\n",
                io_wait_ms);
    meter.report("the run");
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
    return state.wrong == 0 && (state.answers > 0 || clients == 0) ? 0 : 1;
}
