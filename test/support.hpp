// Shared helpers for the forkjoin test suites: worker-count parameters for TEST_P, iteration
// counts that shrink under sanitizers, deadline-guarded waits, and a watchdog so that no test can
// hang forever (a hang is reported by name and aborts the test process instead); and what more
// than one suite needs (thread counts, future_error codes, a throwing index, fib). The stress runs
// add a progress watchdog that dumps the scheduler state on a stall: progress_watchdog.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <forkjoin/forkjoin.hpp>

namespace fj_test {

// --- Sanitizer-aware sizing ----------------------------------------------------------------------

// Which sanitizer this build runs under, for tests that must skip or adapt (with a reason).
inline constexpr bool k_thread_sanitizer =
#if defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif
inline constexpr bool k_address_sanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif
inline constexpr bool k_sanitized = k_thread_sanitizer || k_address_sanitizer;

// Sanitized builds run slower (ThreadSanitizer about 5-15x, AddressSanitizer about 2-3x): loops
// shrink by this factor so the whole suite stays within a couple of minutes per sanitizer.
inline constexpr std::size_t k_sanitizer_slowdown =
    k_thread_sanitizer ? 4 : (k_address_sanitizer ? 2 : 1);

// An iteration count for a loop sized for a release build, shrunk under sanitizers (never below 1).
constexpr std::size_t scaled(std::size_t release_count) {
    const std::size_t n = release_count / k_sanitizer_slowdown;
    return n == 0 ? 1 : n;
}

// --- Deadlines -----------------------------------------------------------------------------------

// A wait that should finish in microseconds gets this long before the test calls it a hang.
inline constexpr std::chrono::seconds k_deadline{30};
// The whole test body (including scheduler destructors) gets this long; then the process aborts.
// Below the CTest TIMEOUT (120 s) so the hang is reported with a message, not just killed.
inline constexpr std::chrono::seconds k_watchdog_limit{90};

// Aborts the process with a message if not destroyed within `limit`: the last line of defence for
// a wait that cannot be given a deadline (a scheduler destructor, shutdown(), a thread join).
class watchdog {
public:
    explicit watchdog(std::string what, std::chrono::seconds limit = k_watchdog_limit)
        : m_what(std::move(what)), m_thread([this, limit] { run(limit); }) {}
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;
    ~watchdog() {
        {
            std::lock_guard lock(m_mutex);
            m_done = true;
        }
        m_cv.notify_one();
        m_thread.join();
    }

private:
    void run(std::chrono::seconds limit) {
        std::unique_lock lock(m_mutex);
        if (m_cv.wait_for(lock, limit, [&] { return m_done; }))
            return;
        std::fprintf(stderr, "\nHANG: %s did not finish within %lld s; aborting\n", m_what.c_str(),
                     static_cast<long long>(limit.count()));
        std::fflush(stderr);
        std::fflush(stdout);
        std::abort();
    }

    std::string m_what;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_done = false; // guarded by m_mutex
    std::thread m_thread;
};

inline std::string current_test_name() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return info == nullptr ? std::string("test")
                           : std::string(info->test_suite_name()) + "." + info->name();
}

// Polls `pred` (yielding) until it holds or `timeout` passes; returns its final value.
template <class Predicate>
bool spin_until(Predicate&& pred, std::chrono::steady_clock::duration timeout = k_deadline) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline)
            return pred();
        std::this_thread::yield();
    }
    return true;
}

// Waits for `f` with a deadline; records a test failure naming `what` if it is not ready by then.
template <class T>
bool wait_ready(const fj::future<T>& f, const std::string& what = "future") {
    if (f.wait_for(k_deadline) == std::future_status::ready)
        return true;
    ADD_FAILURE() << what << " was not ready after " << k_deadline.count()
                  << " s (lost task or deadlock)";
    return false;
}

// get() behind a deadline. On a hang the test fails and gets `fallback` instead of blocking
// forever.
template <class T>
T get_or(fj::future<T>& f, T fallback, const std::string& what = "future") {
    if (!wait_ready(f, what))
        return fallback;
    return f.get();
}

inline bool get_void(fj::future<void>& f, const std::string& what = "future") {
    if (!wait_ready(f, what))
        return false;
    f.get();
    return true;
}

// --- Fixtures ------------------------------------------------------------------------------------

// Every test body runs under a watchdog.
class guarded_test : public ::testing::Test {
    watchdog m_dog{current_test_name()};
};

// Parameterised over worker counts: INSTANTIATE_TEST_SUITE_P(..., fj_test::worker_counts(), ...).
class workers_test : public ::testing::TestWithParam<int> {
protected:
    std::size_t workers() const { return static_cast<std::size_t>(GetParam()); }

private:
    watchdog m_dog{current_test_name()};
};

inline auto worker_counts() {
    return ::testing::Values(1, 2, 3, 4);
}
// For properties that need a thief (stealing, a stolen join branch): at least two workers.
inline auto multi_worker_counts() {
    return ::testing::Values(2, 3, 4);
}

inline std::string worker_count_name(const ::testing::TestParamInfo<int>& info) {
    return "workers_" + std::to_string(info.param);
}

// A small deterministic PRNG (xorshift64*) so stress tests are reproducible per seed.
class rng {
public:
    explicit rng(std::uint64_t seed) : m_state(seed * 0x9e3779b97f4a7c15ull + 1) {}
    std::uint64_t next() {
        m_state ^= m_state >> 12;
        m_state ^= m_state << 25;
        m_state ^= m_state >> 27;
        return m_state * 0x2545f4914f6cdd1dull;
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

private:
    std::uint64_t m_state;
};

// Sets an environment variable for one scope and restores its previous value (or absence).
class scoped_env {
public:
    scoped_env(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name))
            m_old = old;
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~scoped_env() {
        if (m_old)
            ::setenv(m_name.c_str(), m_old->c_str(), 1);
        else
            ::unsetenv(m_name.c_str());
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

// Threads of this process (entries of /proc/self/task).
inline int thread_count() {
    int n = 0;
    if (DIR* dir = ::opendir("/proc/self/task")) {
        while (const dirent* e = ::readdir(dir))
            if (e->d_name[0] != '.')
                ++n;
        ::closedir(dir);
    }
    return n;
}

// The stack size the calling thread was created with (0 if unknown). On a loop fiber too: it is
// the thread's own stack, not the fiber's.
inline std::size_t running_thread_stack_size() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    std::size_t size = 0;
    (void)pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    return size;
}

// The code of the std::future_error that `action` throws; a test failure if it throws none.
inline std::future_errc error_code_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::future_error& e) {
        return static_cast<std::future_errc>(e.code().value());
    }
    ADD_FAILURE() << "no std::future_error thrown";
    return std::future_errc::no_state;
}

// Thrown by a body at one index, so a test can check which of several throwing indices won.
struct at_index : std::runtime_error {
    explicit at_index(std::size_t i) : std::runtime_error("at index"), index(i) {}
    std::size_t index;
};

// Serial reference for the fork/join tests.
constexpr long fib_serial(int n) {
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

// fib in the two fork/join styles, on the current scheduler.
inline long fib_fork(int n) {
    if (n < 2)
        return n;
    fj::future<long> left = fj::fork([n] { return fib_fork(n - 1); });
    const long right = fib_fork(n - 2);
    return left.get() + right;
}

inline long fib_join(int n) {
    if (n < 2)
        return n;
    auto [a, b] = fj::join([n] { return fib_join(n - 1); }, [n] { return fib_join(n - 2); });
    return a + b;
}

// Runs f() as a task of `pool` on one of its workers and returns its result: a call from this
// thread would run on it as a caller, which the workers may help (docs/design/callers.md), and
// get() alone could run the task here (take-over), so wait() comes first. For tests of what the
// pool's own workers do (one worker runs a loop's pieces in order, alone).
template <class F>
auto on_worker(fj::scheduler& pool, F f) {
    auto result = pool.submit(std::move(f));
    result.wait();
    return result.get();
}

// Occupies every worker of `sched` until `release` is set; returns once they are all busy, so a
// test decides what runs where (e.g. that the calling thread must run a task itself).
inline std::vector<fj::future<void>> occupy_workers(fj::scheduler& sched,
                                                    std::atomic<bool>& release) {
    std::atomic<std::size_t> busy{0};
    std::vector<fj::future<void>> blockers;
    for (std::size_t i = 0; i < sched.worker_count(); ++i)
        blockers.push_back(sched.submit([&] {
            busy.fetch_add(1);
            spin_until([&] { return release.load(); });
        }));
    EXPECT_TRUE(spin_until([&] { return busy.load() == sched.worker_count(); }));
    return blockers;
}

} // namespace fj_test
