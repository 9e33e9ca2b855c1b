// The stress runs' progress watchdog: a hang must be diagnosable from the log, so when a run stops
// making progress the watchdog prints the state of every scheduler it watches (each worker's
// counters, deque length, asleep or awake; the injection queue; how many are active) and aborts
// the test process, well before the CTest timeout would kill it without a word.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace fj_test {

// How long a stress run may go without progress before the watchdog calls it a hang: far longer
// than any one step takes, even under ThreadSanitizer on a loaded machine.
inline constexpr std::chrono::seconds k_stall_limit{20};

// One scheduler's state, as the watchdog and the per-round deadline checks print it.
inline std::string state_of(const fj::scheduler& pool, const std::string& name = "scheduler") {
    std::ostringstream out;
    out << "--- " << name << " (" << pool.worker_count() << " workers) ---\n" << pool.stats();
    return out.str();
}

class progress_watchdog {
public:
    // While a handle lives, its scheduler's state is part of the dump. Declare it after the
    // scheduler so it is destroyed first: the dump never reads a destroyed scheduler.
    class watch_handle {
    public:
        watch_handle(progress_watchdog& dog, const fj::scheduler& pool, std::string name)
            : m_dog(&dog), m_pool(&pool) {
            std::lock_guard lock(m_dog->m_mutex);
            m_dog->m_watched.push_back({m_pool, std::move(name)});
        }
        watch_handle(const watch_handle&) = delete;
        watch_handle& operator=(const watch_handle&) = delete;
        ~watch_handle() {
            std::lock_guard lock(m_dog->m_mutex);
            std::erase_if(m_dog->m_watched, [&](const watched& w) { return w.pool == m_pool; });
        }

    private:
        progress_watchdog* m_dog;
        const fj::scheduler* m_pool;
    };

    // Watches the test run `what`: it must call tick() at least once every `limit`.
    explicit progress_watchdog(std::string what, std::chrono::seconds limit = k_stall_limit)
        : m_what(std::move(what)), m_thread([this, limit] { run(limit); }) {}
    progress_watchdog(const progress_watchdog&) = delete;
    progress_watchdog& operator=(const progress_watchdog&) = delete;
    ~progress_watchdog() {
        {
            std::lock_guard lock(m_mutex);
            m_done = true;
        }
        m_cv.notify_one();
        m_thread.join();
    }

    // The run made progress (any thread may call it).
    void tick() noexcept { m_progress.fetch_add(1, std::memory_order_relaxed); }

    [[nodiscard]] watch_handle watch(const fj::scheduler& pool, std::string name = "scheduler") {
        return watch_handle(*this, pool, std::move(name));
    }

private:
    struct watched {
        const fj::scheduler* pool;
        std::string name;
    };

    void run(std::chrono::seconds limit) {
        std::uint64_t last = m_progress.load(std::memory_order_relaxed);
        auto last_change = std::chrono::steady_clock::now();
        std::unique_lock lock(m_mutex);
        while (!m_cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return m_done; })) {
            const std::uint64_t now_value = m_progress.load(std::memory_order_relaxed);
            const auto now = std::chrono::steady_clock::now();
            if (now_value != last) {
                last = now_value;
                last_change = now;
                continue;
            }
            if (now - last_change < limit)
                continue;
            // Still holding the mutex: no watched scheduler can be unwatched (and destroyed)
            // while its state is read.
            std::string state;
            for (const watched& w : m_watched)
                state += state_of(*w.pool, w.name);
            if (m_watched.empty())
                state = "(no scheduler watched at this point)\n";
            std::fprintf(stderr,
                         "\nSTALL: %s made no progress for %lld s (progress counter at %llu)\n"
                         "scheduler state:\n%s",
                         m_what.c_str(), static_cast<long long>(limit.count()),
                         static_cast<unsigned long long>(now_value), state.c_str());
            std::fflush(stderr);
            std::abort();
        }
    }

    std::string m_what;
    std::atomic<std::uint64_t> m_progress{0};
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_done = false;            // guarded by m_mutex
    std::vector<watched> m_watched; // guarded by m_mutex
    std::thread m_thread;           // last: starts after everything it reads is built
};

} // namespace fj_test
