// A catalogue of std::async programs whose tasks block on each other or on the system, each run
// with std::async (one thread per task) and with fj::async on pools of 1, 2 and 4 workers: same
// results, and no hang. Every program has more blocking tasks than the pool has workers, with the
// task that unblocks them queued last, so it runs only if the pool rescues itself
// (docs/design/rescue.md). The test fixture's watchdog aborts a hang with the test's name.
#include "support.hpp"

#include <barrier>
#include <condition_variable>
#include <deque>
#include <future>
#include <latch>
#include <mutex>
#include <numeric>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;

// How a program starts a task: std::async(std::launch::async, f) or fj::async(pool, f).
struct std_launcher {
    template <class F>
    auto operator()(F f) const {
        return std::async(std::launch::async, std::move(f));
    }
};

struct fj_launcher {
    fj::scheduler* pool;
    template <class F>
    auto operator()(F f) const {
        return fj::async(*pool, std::move(f));
    }
};

// Waiters on a latch (more than the workers), then the task that opens it.
template <class Launch>
int latch_rendezvous(Launch async, int waiters) {
    std::latch open(1);
    std::vector<decltype(async([] { return 0; }))> futures;
    for (int i = 0; i < waiters; ++i)
        futures.push_back(async([&open, i] {
            open.wait();
            return i;
        }));
    auto opener = async([&open] {
        open.count_down();
        return 0;
    });
    int sum = opener.get();
    for (auto& f : futures)
        sum += f.get();
    return sum;
}

// Consumers block on a condition variable until a producer queued after them fills the queue.
template <class Launch>
long producer_consumer(Launch async, int consumers, int items_each) {
    std::mutex m;
    std::condition_variable cv;
    std::deque<int> queue;
    std::vector<decltype(async([] { return 0L; }))> futures;
    for (int c = 0; c < consumers; ++c)
        futures.push_back(async([&] {
            long sum = 0;
            for (int k = 0; k < items_each; ++k) {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return !queue.empty(); });
                sum += queue.front();
                queue.pop_front();
            }
            return sum;
        }));
    auto producer = async([&] {
        for (int i = 1; i <= consumers * items_each; ++i) {
            {
                std::lock_guard lock(m);
                queue.push_back(i);
            }
            cv.notify_one();
        }
        return 0L;
    });
    long total = producer.get();
    for (auto& f : futures)
        total += f.get();
    return total;
}

// std::barrier phases with more parties than workers: every party is a task.
template <class Launch>
int barrier_phases(Launch async, int parties, int phases) {
    std::atomic<int> completions{0};
    std::barrier sync(parties, [&completions]() noexcept { completions.fetch_add(1); });
    std::vector<decltype(async([] { return 0; }))> futures;
    for (int p = 0; p < parties; ++p)
        futures.push_back(async([&sync, phases] {
            for (int k = 0; k < phases; ++k)
                sync.arrive_and_wait();
            return 1;
        }));
    int arrived = 0;
    for (auto& f : futures)
        arrived += f.get();
    return arrived * 1000 + completions.load();
}

// A reader blocks in read(2) on a pipe before the writer is even queued.
template <class Launch>
std::string pipe_reader_first(Launch async, int readers) {
    std::vector<int> fds(2 * static_cast<std::size_t>(readers));
    for (int r = 0; r < readers; ++r)
        if (::pipe(&fds[2 * static_cast<std::size_t>(r)]) != 0)
            return "pipe() failed";
    std::vector<decltype(async([] { return std::string(); }))> futures;
    for (int r = 0; r < readers; ++r)
        futures.push_back(async([fd = fds[2 * static_cast<std::size_t>(r)]] {
            char text[16] = {};
            const ssize_t got = ::read(fd, text, 5);
            return std::string(text, got > 0 ? static_cast<std::size_t>(got) : 0);
        }));
    auto writer = async([&fds, readers] {
        for (int r = 0; r < readers; ++r)
            if (::write(fds[2 * static_cast<std::size_t>(r) + 1], "hello", 5) != 5)
                return std::string("write failed");
        return std::string();
    });
    std::string all = writer.get();
    for (auto& f : futures)
        all += f.get();
    for (int fd : fds)
        ::close(fd);
    return all;
}

// Promise pairs: each waiter blocks on a std::future whose promise a later task fulfils.
template <class Launch>
int promise_pairs(Launch async, int pairs) {
    std::vector<std::promise<int>> promises(static_cast<std::size_t>(pairs));
    std::vector<decltype(async([] { return 0; }))> futures;
    for (auto& p : promises)
        futures.push_back(async([f = p.get_future()]() mutable { return f.get() * 2; }));
    for (int i = 0; i < pairs; ++i)
        futures.push_back(async([&promises, i] {
            promises[static_cast<std::size_t>(i)].set_value(i);
            return 0;
        }));
    int sum = 0;
    for (auto& f : futures)
        sum += f.get();
    return sum;
}

// Tasks wait on std::futures of std::async tasks (threads the pool does not own) which wait in
// turn on a later task of the pool.
template <class Launch>
int waiting_on_std_futures(Launch async, int waiters) {
    std::promise<int> gate;
    std::shared_future<int> opened = gate.get_future().share();
    std::vector<decltype(async([] { return 0; }))> futures;
    for (int i = 0; i < waiters; ++i)
        futures.push_back(async([opened] {
            auto outside = std::async(std::launch::async, [opened] { return opened.get() + 1; });
            return outside.get();
        }));
    auto opener = async([&gate] {
        gate.set_value(1);
        return 0;
    });
    int sum = opener.get();
    for (auto& f : futures)
        sum += f.get();
    return sum;
}

// Many sleepers: all of them finish.
template <class Launch>
int many_sleepers(Launch async, int sleepers) {
    std::vector<decltype(async([] { return 0; }))> futures;
    for (int i = 0; i < sleepers; ++i)
        futures.push_back(async([] {
            std::this_thread::sleep_for(20ms);
            return 1;
        }));
    int sum = 0;
    for (auto& f : futures)
        sum += f.get();
    return sum;
}

// Fan-out on a std::shared_future set by a task queued after all the readers.
template <class Launch>
long shared_future_fan_out(Launch async, int readers) {
    std::promise<long> source;
    std::shared_future<long> value = source.get_future().share();
    std::vector<decltype(async([] { return 0L; }))> futures;
    for (int i = 0; i < readers; ++i)
        futures.push_back(async([value, i] { return value.get() + i; }));
    auto setter = async([&source] {
        source.set_value(100);
        return 0L;
    });
    long sum = setter.get();
    for (auto& f : futures)
        sum += f.get();
    return sum;
}

// Nested async chains: each level starts the next with the same launcher and get()s it, while a
// latch holds the deepest level until a task queued after the whole chain opens it.
template <class Launch>
int nested_chain(Launch async, int depth) {
    std::latch open(1);
    struct level {
        static int run(Launch a, std::latch& open, int d) {
            if (d == 0) {
                open.wait();
                return 0;
            }
            auto inner = a([a, &open, d] { return run(a, open, d - 1); });
            return inner.get() + d;
        }
    };
    auto chain = async([async, &open, depth] { return level::run(async, open, depth); });
    auto opener = async([&open] {
        std::this_thread::sleep_for(1ms); // queued last; opening late is the point
        open.count_down();
        return 0;
    });
    return opener.get() + chain.get();
}

class async_catalogue : public fj_test::workers_test {
protected:
    fj::scheduler make_pool() const {
        fj::scheduler_options o;
        o.workers = workers();
        return fj::scheduler(o);
    }
};

// Blocking tasks: more than the workers, plus two.
int blockers(std::size_t workers) {
    return static_cast<int>(workers) + 2;
}

TEST_P(async_catalogue, LatchRendezvousWithMoreWaitersThanWorkers) {
    fj::scheduler pool = make_pool();
    const int n = blockers(workers());
    EXPECT_EQ(latch_rendezvous(fj_launcher{&pool}, n), latch_rendezvous(std_launcher{}, n));
}

TEST_P(async_catalogue, ConsumersOnAConditionVariableBeforeTheirProducer) {
    fj::scheduler pool = make_pool();
    const int n = blockers(workers());
    EXPECT_EQ(producer_consumer(fj_launcher{&pool}, n, 20),
              producer_consumer(std_launcher{}, n, 20));
}

TEST_P(async_catalogue, BarrierPhasesWithMorePartiesThanWorkers) {
    fj::scheduler pool = make_pool();
    const int n = blockers(workers());
    EXPECT_EQ(barrier_phases(fj_launcher{&pool}, n, 3), barrier_phases(std_launcher{}, n, 3));
}

TEST_P(async_catalogue, PipeReadersBlockedBeforeTheWriterIsQueued) {
    fj::scheduler pool = make_pool();
    const int n = blockers(workers());
    std::string expected;
    for (int r = 0; r < n; ++r)
        expected += "hello";
    EXPECT_EQ(pipe_reader_first(std_launcher{}, n), expected);
    EXPECT_EQ(pipe_reader_first(fj_launcher{&pool}, n), expected);
}

TEST_P(async_catalogue, PromisePairsFulfilledByLaterTasks) {
    fj::scheduler pool = make_pool();
    const int n = blockers(workers());
    EXPECT_EQ(promise_pairs(fj_launcher{&pool}, n), promise_pairs(std_launcher{}, n));
}

TEST_P(async_catalogue, TasksWaitingOnStdFutures) {
    fj::scheduler pool = make_pool();
    const int n = blockers(workers());
    EXPECT_EQ(waiting_on_std_futures(fj_launcher{&pool}, n),
              waiting_on_std_futures(std_launcher{}, n));
}

TEST_P(async_catalogue, ManySleepersAllFinish) {
    fj::scheduler pool = make_pool();
    EXPECT_EQ(many_sleepers(fj_launcher{&pool}, 16), many_sleepers(std_launcher{}, 16));
}

TEST_P(async_catalogue, FanOutOnASharedFutureSetLast) {
    fj::scheduler pool = make_pool();
    const int n = 2 * blockers(workers());
    EXPECT_EQ(shared_future_fan_out(fj_launcher{&pool}, n),
              shared_future_fan_out(std_launcher{}, n));
}

TEST_P(async_catalogue, NestedAsyncChainsWithGet) {
    fj::scheduler pool = make_pool();
    const int depth = blockers(workers()) + 2;
    EXPECT_EQ(nested_chain(fj_launcher{&pool}, depth), nested_chain(std_launcher{}, depth));
}

INSTANTIATE_TEST_SUITE_P(workers, async_catalogue, ::testing::Values(1, 2, 4),
                         fj_test::worker_count_name);

} // namespace
