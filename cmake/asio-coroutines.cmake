# FJ_ASIO_COROUTINES: whether this compiler builds a Boost.Asio coroutine (asio::awaitable,
# asio::use_awaitable, asio::co_spawn), which examples/asio_server.cpp and test/asio/ need.
# <forkjoin/asio.hpp> itself compiles without it (its other completion tokens need no coroutine
# support), and the header check compiles it with every compiler.
#
# Boost 1.74's Asio turns its coroutines on for GCC's C++20 coroutines, and for clang only with
# the Coroutines TS's <experimental/coroutine>, which libstdc++ does not have: on Debian 12 that
# means g++ (12) yes, clang++-14 no. Checked by compiling, not by compiler id, so a Boost or a
# compiler that supports it is picked up by itself. Included by examples/ and test/; the result
# is cached. fj_link_asio (below) adds what such a target needs.
include_guard(GLOBAL)
include(CheckCXXSourceCompiles)

set(CMAKE_REQUIRED_LIBRARIES Boost::headers Threads::Threads)
set(CMAKE_REQUIRED_QUIET ON)
# <utility> first: Boost 1.74's awaitable.hpp uses std::exchange without including it, which
# libstdc++ 12's headers no longer pull in by themselves (programs include a standard header
# before it, as this project's style puts them first).
check_cxx_source_compiles([=[
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

boost::asio::awaitable<int> answer() {
    co_await boost::asio::post(boost::asio::use_awaitable);
    co_return 42;
}

int main() {
    boost::asio::io_context io;
    boost::asio::co_spawn(io, answer(), boost::asio::detached);
    io.run();
}
]=] FJ_ASIO_COROUTINES)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)

if(FJ_ASIO_COROUTINES)
    message(STATUS "forkjoin: Boost.Asio coroutines work with this compiler: building the "
                   "Boost.Asio example and tests")
else()
    message(STATUS "forkjoin: Boost.Asio coroutines (asio::awaitable) do not build with "
                   "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} and Boost "
                   "${Boost_VERSION}: skipping examples/asio_server and test/asio/ "
                   "(g++ 10 or later builds them)")
endif()

# fj_link_asio(<target>): what a target using Boost.Asio needs. Under ThreadSanitizer, Asio's
# fenced blocks are turned off (BOOST_ASIO_DISABLE_FENCED_BLOCK): TSan does not model
# std::atomic_thread_fence, which g++ 12 reports as a warning (-Wtsan, an error under FJ_WERROR),
# and Asio hands every handler between threads through its scheduler's mutex anyway, which TSan
# does see.
function(fj_link_asio target)
    target_link_libraries(${target} PRIVATE Boost::headers)
    if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*thread")
        target_compile_definitions(${target} PRIVATE BOOST_ASIO_DISABLE_FENCED_BLOCK)
    endif()
endfunction()
