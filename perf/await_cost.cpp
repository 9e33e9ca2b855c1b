// What co_await on an fj::future costs against a then() registration on the same future
// (docs/performance.md#await-cost). Every row is a chain of N items; an item is a fresh
// fj::promise<int> and its future, something that waits on the future, and set_value(). The
// waiter's continuation starts the next item, so items never pile up in a deque and each item's
// time covers: the promise's allocation, registering the waiter, the completion that queues it,
// and its run (the resumption). Rows:
//
//   then, pending     future.then(f) before set_value(): allocates the continuation block, which
//                     owns the future; then()'s own result future is dropped (a detach).
//   co_await, pending a coroutine started before set_value() suspends in co_await: its frame is
//                     the one allocation, its awaiter is the future's waiter record; the
//                     completion queues the resumption exactly as it queues a then() body.
//   then, ready       set_value() first: then() finds the future ready and queues f at once.
//   co_await, ready   set_value() first: the coroutine does not suspend (checked: await_suspend
//                     is counted and must not run), so nothing is queued; a plain loop.
//   promise only      promise, future, set_value(), get(): the part every row shares.
//
// Both waiters are as small as each form allows: a lambda for then(), and a coroutine type of
// this file's own (starts at once, frees its frame at its end) for co_await, so the row measures
// the await and not fj::task's machinery. Rounds are rotated as in coroutine_fib.cpp; the ratios
// are per round.
//
//   await_cost [--items 200000] [--rounds 11] [--workers 1,2]
#include "measure.hpp"

#include <algorithm>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <forkjoin/forkjoin.hpp>

namespace {

// A coroutine that runs as soon as it is called and frees its frame when it ends.
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

// Counts the suspensions of fj's future awaiter. A plain counter: the items of a chain run one
// after the other, each after the completion that queued it (happens-before through the queue).
long g_suspends = 0;

template <class Awaiter>
struct counting {
    Awaiter inner;
    bool await_ready() { return inner.await_ready(); }
    bool await_suspend(std::coroutine_handle<> h) {
        ++g_suspends;
        return inner.await_suspend(h);
    }
    decltype(auto) await_resume() { return inner.await_resume(); }
};

auto counted(fj::future<int>& f) {
    return counting<decltype(fj::operator co_await(f))>{fj::operator co_await(f)};
}

// One chain: the items still to start and the promise the last item sets.
struct chain {
    long left = 0;
    long sum = 0;
    fj::promise<void> done;
};

bool chain_over(chain& c) {
    if (c.left-- > 0)
        return false;
    c.done.set_value();
    return true;
}

void then_pending(chain& c) {
    if (chain_over(c))
        return;
    fj::promise<int> p;
    (void)p.get_future().then([&c](int v) {
        c.sum += v;
        then_pending(c);
    });
    p.set_value(1);
}

void await_pending(chain& c);

detached await_one(fj::future<int> f, chain& c) {
    c.sum += co_await counted(f);
    await_pending(c);
}

void await_pending(chain& c) {
    if (chain_over(c))
        return;
    fj::promise<int> p;
    await_one(p.get_future(), c); // runs to its co_await and suspends there
    p.set_value(1);               // queues the resumption on this worker's deque
}

void then_ready(chain& c) {
    if (chain_over(c))
        return;
    fj::promise<int> p;
    p.set_value(1);
    (void)p.get_future().then([&c](int v) {
        c.sum += v;
        then_ready(c);
    });
}

detached await_ready_one(fj::future<int> f, long& sum) {
    sum += co_await counted(f);
}

// Runs one row's N items on `pool`; false if an item was lost or the suspensions are wrong. `c`
// outlives the pool: the last item may still be inside c.done.set_value() when done.get()
// returns here.
bool run_row(fj::scheduler& pool, chain& c, int row, long items) {
    c.left = items;
    fj::future<void> done = c.done.get_future();
    const long suspends_before = g_suspends;
    // The items run on a worker, and main waits for the chain's own promise. (A get() on the
    // submitted task's future from main could run it on main instead, as a caller of the pool:
    // docs/design/callers.md#take-over.)
    switch (row) {
    case 0:
        (void)pool.submit([&c] { then_pending(c); });
        break;
    case 1:
        (void)pool.submit([&c] { await_pending(c); });
        break;
    case 2:
        (void)pool.submit([&c] { then_ready(c); });
        break;
    case 3:
        (void)pool.submit([&c] {
            for (long i = 0; i < c.left; ++i) {
                fj::promise<int> p;
                p.set_value(1);
                await_ready_one(p.get_future(), c.sum); // ends before it returns
            }
            c.left = 0;
            chain_over(c);
        });
        break;
    default:
        (void)pool.submit([&c] {
            for (long i = 0; i < c.left; ++i) {
                fj::promise<int> p;
                fj::future<int> f = p.get_future();
                p.set_value(1);
                c.sum += f.get();
            }
            c.left = 0;
            chain_over(c);
        });
        break;
    }
    done.get(); // the last item has run
    const long suspends = g_suspends - suspends_before;
    const long want_suspends = row == 1 ? items : 0;
    if (c.sum != items || ((row == 1 || row == 3) && suspends != want_suspends)) {
        std::fprintf(stderr, "row %d: %ld items done, %ld suspensions (expected %ld and %ld)\n",
                     row, c.sum, suspends, items, want_suspends);
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    long items = 200000;
    int rounds = 11;
    std::vector<std::string> worker_counts{"1", "2"};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--items") == 0)
            items = std::atol(argv[i + 1]);
        else if (std::strcmp(argv[i], "--rounds") == 0)
            rounds = std::atoi(argv[i + 1]);
        else if (std::strcmp(argv[i], "--workers") == 0)
            worker_counts = fj_perf::split(argv[i + 1]);
    }
    const std::vector<std::string> names{"then, pending", "co_await, pending", "then, ready",
                                         "co_await, ready", "promise only"};
    std::printf("%ld items, %d rounds, load average %s\n", items, rounds,
                fj_perf::load_average().c_str());
    for (const std::string& w : worker_counts) {
        std::vector<chain> chains(names.size() * static_cast<std::size_t>(rounds));
        fj::scheduler pool(static_cast<std::size_t>(std::atoi(w.c_str())));
        std::vector<std::vector<double>> ns(names.size());
        const fj_perf::interference_meter meter; // flags a table other processes disturbed
        for (int round = 0; round < rounds; ++round)
            for (std::size_t k = 0; k < names.size(); ++k) {
                const std::size_t row = (k + static_cast<std::size_t>(round)) % names.size();
                chain& c = chains[static_cast<std::size_t>(round) * names.size() + row];
                bool ok = true;
                const double s = fj_perf::seconds_of(
                    [&] { ok = run_row(pool, c, static_cast<int>(row), items); });
                if (!ok)
                    return 1;
                ns[row].push_back(s * 1e9 / static_cast<double>(items));
            }
        std::printf("%s worker(s), ns per item, median (min-max):\n", w.c_str());
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto [lo, hi] = std::minmax_element(ns[i].begin(), ns[i].end());
            std::printf("  %-18s %7.1f (%.1f-%.1f)\n", names[i].c_str(), fj_perf::median(ns[i]),
                        *lo, *hi);
        }
        // The ratios the goal is about, round by round.
        const auto ratio = [&](std::size_t a, std::size_t b) {
            std::vector<double> r;
            for (int i = 0; i < rounds; ++i)
                r.push_back(ns[a][static_cast<std::size_t>(i)] /
                            ns[b][static_cast<std::size_t>(i)]);
            const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
            std::printf("  %s / %s = %.3f (%.3f-%.3f)\n", names[a].c_str(), names[b].c_str(),
                        fj_perf::median(r), *lo, *hi);
        };
        ratio(1, 0);
        ratio(3, 2);
        ratio(3, 4);
        meter.report(w + " worker(s)");
    }
    std::printf("suspensions of co_await, ready: 0 in every round (checked)\n");
    std::printf("load average after: %s\n", fj_perf::load_average().c_str());
    return 0;
}
