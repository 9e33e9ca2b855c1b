// A TCP server whose requests are computed by forkjoin, shared by examples/asio_server.cpp and
// test/asio/asio_server_test.cpp.
//
// Protocol: one request per line, "pi <from> <count>\n"; the reply is the line of the <count>
// hexadecimal digits of pi at positions [from, from + count) (examples/bbp.hpp), or
// "error: <reason>\n" for a request that is not one. A connection takes any number of requests,
// one at a time, until the client closes it.
//
// The Asio side is coroutines on the caller's io_context (one I/O thread in both programs). Each
// request, parsing included, runs on the forkjoin pool through fj::asio::async_run: the
// connection's coroutine is suspended meanwhile, the I/O thread serves the other connections,
// and the coroutine resumes on the I/O thread with the reply, or with the exception the
// computation threw. The digits of one request are computed by fj::parallel_for.
#pragma once

#include "bbp.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <forkjoin/asio.hpp>
#include <forkjoin/parallel_for.hpp>

namespace pi_server {

namespace asio = boost::asio;
using asio::ip::tcp;

inline constexpr std::uint64_t k_max_count = 1024;   // digits in one reply
inline constexpr std::uint64_t k_max_from = 1000000; // BBP stays exact far beyond this
inline constexpr std::size_t k_max_line = 256;       // a longer request closes the connection

// The digits of pi at [from, from + count), one parallel_for over the positions.
inline std::string hex_digits(fj::scheduler& pool, std::uint64_t from, std::uint64_t count) {
    std::string digits(count, '?');
    fj::parallel_for(pool, std::uint64_t{0}, count, [&](std::uint64_t i) {
        digits[i] = bbp::hex_char(bbp::hex_digit_of_pi(from + i));
    });
    return digits;
}

// The reply to one request line (without its '\n'). Throws std::invalid_argument for a line that
// is not a request: the exception travels back to the connection's co_await.
inline std::string answer(fj::scheduler& pool, const std::string& line) {
    std::istringstream in(line);
    std::string verb;
    long long from = -1, count = -1;
    std::string rest;
    if (!(in >> verb >> from >> count) || verb != "pi" || (in >> rest))
        throw std::invalid_argument("expected 'pi <from> <count>'");
    if (from < 0 || static_cast<std::uint64_t>(from) > k_max_from || count < 1 ||
        static_cast<std::uint64_t>(count) > k_max_count)
        throw std::invalid_argument("want 0 <= from <= " + std::to_string(k_max_from) +
                                    " and 1 <= count <= " + std::to_string(k_max_count));
    return hex_digits(pool, static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(count));
}

// What a server is told about, for the programs that check it.
struct observer {
    std::function<void()> on_compute; // on the thread that runs a request's computation
    std::function<void()> on_request; // on the I/O thread, before a request is computed
    std::function<void()> on_reply;   // on the I/O thread, once its reply (or error) is back
};

inline asio::awaitable<void> serve_connection(tcp::socket socket, fj::scheduler& pool,
                                              const observer& watch) {
    std::string buffer;
    try {
        for (;;) {
            const std::size_t n = co_await asio::async_read_until(
                socket, asio::dynamic_buffer(buffer, k_max_line), '\n', asio::use_awaitable);
            std::string line = buffer.substr(0, n - 1);
            buffer.erase(0, n);
            if (watch.on_request)
                watch.on_request();
            // A named callable: g++ 12 mishandles a lambda temporary that owns a string inside
            // a co_await expression (it frees the string twice).
            auto compute = [&pool, &watch, line = std::move(line)] {
                if (watch.on_compute)
                    watch.on_compute();
                return answer(pool, line);
            };
            std::string reply;
            try {
                reply = co_await fj::asio::async_run(pool, std::move(compute), asio::use_awaitable);
            } catch (const std::exception& e) {
                reply = std::string("error: ") + e.what();
            }
            if (watch.on_reply)
                watch.on_reply();
            reply += '\n';
            co_await asio::async_write(socket, asio::buffer(reply), asio::use_awaitable);
        }
    } catch (const boost::system::system_error&) {
        // The client closed the connection (eof), or sent a line over k_max_line: done with it.
    }
}

// Accepts connections until the acceptor is closed; each is served by its own coroutine on the
// acceptor's executor. The acceptor, the pool and the observer outlive the io_context's run().
inline asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, fj::scheduler& pool,
                                         const observer& watch) {
    try {
        for (;;) {
            tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
            asio::co_spawn(acceptor.get_executor(),
                           serve_connection(std::move(socket), pool, watch), asio::detached);
        }
    } catch (const boost::system::system_error&) {
        // The acceptor was closed: the server stops taking connections.
    }
}

// A listening socket on 127.0.0.1:port (0: a port the system picks; acceptor.local_endpoint()
// tells which).
inline tcp::acceptor listen_on_loopback(asio::io_context& io, std::uint16_t port) {
    return tcp::acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), port));
}

} // namespace pi_server
