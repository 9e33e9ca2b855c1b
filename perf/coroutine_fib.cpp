// fib(n) by fork/join three ways, in paired rounds: serial recursion, fj::join of two lambdas, and
// fj::task coroutines joined with co_await fj::join (docs/performance.md#coroutine-tasks); and, as
// the compiler's floor for coroutines, the same recursion with a bare coroutine type. Each
// round runs every row once, in an order that rotates by one from round to round; the table gives
// each row's median and range and the per-round ratios.
//
//   coroutine_fib [--n 30] [--rounds 11] [--workers 1,2]
#include "measure.hpp"

#include <algorithm>
#include <coroutine>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

// noinline: the compiler must not turn the serial reference into a loop it can fold.
[[gnu::noinline]] long serial_fib(int n) {
    return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

long join_fib(int n) {
    if (n < 2)
        return n;
    auto [a, b] = fj::join([n] { return join_fib(n - 1); }, [n] { return join_fib(n - 2); });
    return a + b;
}

// The floor of the compiler's coroutines for the same recursion: a minimal lazy coroutine type,
// frames from a thread-local free list, each child awaited in turn on this thread (no pool, no
// fork, no exception handling). What fj::task costs above this row is the runtime's.
class bare_task {
public:
    struct promise_type {
        static void* operator new(std::size_t size) {
            if (free_frames != nullptr && size <= k_frame_bytes)
                return std::exchange(free_frames, free_frames->next);
            return ::operator new(std::max(size, k_frame_bytes));
        }
        static void operator delete(void* p) noexcept {
            free_frames = ::new (p) free_frame{free_frames};
        }
        bare_task get_return_object() noexcept {
            return bare_task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct final_awaiter {
            bool await_ready() noexcept { return false; }
            std::coroutine_handle<>
            await_suspend(std::coroutine_handle<promise_type> self) noexcept {
                return self.promise().continuation;
            }
            void await_resume() noexcept {}
        };
        final_awaiter final_suspend() noexcept { return {}; }
        void return_value(long v) noexcept { value = v; }
        void unhandled_exception() noexcept { std::terminate(); }

        std::coroutine_handle<> continuation;
        long value = 0;
    };

    bare_task(bare_task&& o) noexcept : m_handle(std::exchange(o.m_handle, {})) {}
    ~bare_task() {
        if (m_handle)
            m_handle.destroy();
    }
    bool await_ready() noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        m_handle.promise().continuation = awaiting;
        return m_handle;
    }
    long await_resume() noexcept { return m_handle.promise().value; }

private:
    struct free_frame {
        free_frame* next;
    };
    static constexpr std::size_t k_frame_bytes = 256;
    static inline thread_local free_frame* free_frames = nullptr;

    explicit bare_task(std::coroutine_handle<promise_type> h) noexcept : m_handle(h) {}
    std::coroutine_handle<promise_type> m_handle;
};

bare_task bare_fib(int n) {
    if (n < 2)
        co_return n;
    const long a = co_await bare_fib(n - 1);
    const long b = co_await bare_fib(n - 2);
    co_return a + b;
}

// Runs a bare_task to its end on this thread: the outermost awaiter, which starts nothing else.
struct bare_root {
    struct promise_type {
        bare_root get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

bare_root run_bare_fib(int n, long& out) {
    out = co_await bare_fib(n);
}

fj::task<long> task_fib(int n) {
    if (n < 2)
        co_return n;
    auto [a, b] = co_await fj::join(task_fib(n - 1), task_fib(n - 2));
    co_return a + b;
}

} // namespace

int main(int argc, char** argv) {
    int n = 30;
    int rounds = 11;
    std::vector<std::string> worker_counts{"1", "2"};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--n") == 0)
            n = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--rounds") == 0)
            rounds = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--workers") == 0)
            worker_counts = fj_perf::split(argv[i + 1]);
    }
    const long expected = serial_fib(n);
    std::printf("fib(%d), %d rounds, load average %s\n", n, rounds,
                fj_perf::load_average().c_str());
    for (const std::string& w : worker_counts) {
        fj::scheduler pool(static_cast<std::size_t>(std::atoi(w.c_str())));
        const std::vector<std::string> names{"serial", "fj::join", "fj::task", "coroutine"};
        const std::vector<std::function<long()>> rows{
            [&] { return serial_fib(n); },
            [&] { return pool.execute([&] { return join_fib(n); }); },
            [&] { return fj::async(pool, task_fib(n)).get(); },
            [&] {
                long out = 0;
                run_bare_fib(n, out);
                return out;
            }};
        std::vector<std::vector<double>> ms(rows.size());
        for (int round = 0; round < rounds; ++round)
            for (std::size_t k = 0; k < rows.size(); ++k) {
                const std::size_t row = (k + static_cast<std::size_t>(round)) % rows.size();
                long got = 0;
                const double s = fj_perf::seconds_of([&] { got = rows[row](); });
                if (got != expected) {
                    std::fprintf(stderr, "%s: fib(%d) = %ld, expected %ld\n", names[row].c_str(), n,
                                 got, expected);
                    return 1;
                }
                ms[row].push_back(s * 1e3);
            }
        std::printf("%s worker(s):\n", w.c_str());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            std::vector<double> sorted = ms[i];
            std::sort(sorted.begin(), sorted.end());
            std::printf("  %-9s %8.2f ms (%.2f-%.2f)\n", names[i].c_str(), fj_perf::median(ms[i]),
                        sorted.front(), sorted.back());
        }
        fj_perf::print_paired_ratios(names, ms);
    }
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
    return 0;
}
