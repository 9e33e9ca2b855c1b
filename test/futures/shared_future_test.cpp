// fj::shared_future<T> (docs/design/shared-future.md): one task's result read by many copies on
// many threads. Outside threads block and tasks park (or help) while they wait; every get() sees
// the same value or the same exception; timed waits time out and come back; copies come and go
// while others wait; dropping every copy early neither blocks nor leaks (ASan's leak check in the
// sanitizer presets); then() keeps the shared_future; promises' futures share too.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <forkjoin/detail/fault_injection.hpp>

namespace {

using namespace std::chrono_literals;
using fj_test::scaled;
using fj_test::spin_until;

class shared_future_test : public fj_test::workers_test {};
// The waits inside tasks, on the worker counts the parking property is stated for.
class shared_future_in_tasks_test : public fj_test::workers_test {};
class shared_future_misuse_test : public fj_test::guarded_test {};

using fj_test::error_code_of;

// The exception that get() throws, or null if it returned.
template <class T>
std::exception_ptr error_of(const fj::shared_future<T>& f) {
    try {
        f.get();
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

// wait_for() behind a deadline: a hang fails the test instead of blocking it forever.
template <class T>
bool wait_ready(const fj::shared_future<T>& f) {
    if (f.wait_for(fj_test::k_deadline) == std::future_status::ready)
        return true;
    ADD_FAILURE() << "the shared_future was not ready after " << fj_test::k_deadline.count()
                  << " s (lost wake-up or deadlock)";
    return false;
}

// A task on `sched` that returns make() once `release` is set, shared: not ready until then.
template <class Make>
auto held_back(fj::scheduler& sched, std::atomic<bool>& release, Make make) {
    return sched
        .submit([&release, make]() mutable {
            spin_until([&] { return release.load(); });
            return make();
        })
        .share();
}

static_assert(std::is_same_v<decltype(std::declval<fj::shared_future<int>&>().get()), const int&>);
static_assert(std::is_same_v<decltype(std::declval<fj::shared_future<int&>&>().get()), int&>);
static_assert(std::is_same_v<decltype(std::declval<fj::shared_future<void>&>().get()), void>);
static_assert(
    std::is_same_v<decltype(std::declval<fj::future<int>&>().share()), fj::shared_future<int>>);
static_assert(std::is_copy_constructible_v<fj::shared_future<std::unique_ptr<int>>>);
static_assert(std::is_nothrow_move_constructible_v<fj::shared_future<int>>);

// Many outside threads wait at once, on their own copies and on one shared object (its const
// members may be called concurrently); the broadcast wakes all of them, and they all read the one
// stored value, repeatedly.
TEST_P(shared_future_test, GetFromManyCopiesOnOutsideThreads) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    const fj::shared_future<std::string> shared =
        held_back(sched, release, [] { return std::string("the result"); });
    constexpr int k_threads = 8;
    std::atomic<int> started{0}, good_reads{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i)
        threads.emplace_back([&, i, copy = shared] {
            const fj::shared_future<std::string>& f = i % 2 == 0 ? copy : shared;
            started.fetch_add(1);
            if (!wait_ready(f))
                return;
            for (int read = 0; read < 3; ++read)
                if (f.get() == "the result" && &f.get() == &copy.get())
                    good_reads.fetch_add(1);
        });
    EXPECT_TRUE(spin_until([&] { return started.load() == k_threads; }));
    release.store(true);
    for (std::thread& t : threads)
        t.join();
    EXPECT_EQ(good_reads.load(), 3 * k_threads);
    EXPECT_EQ(shared.get(), "the result");
}

// More waiting tasks than workers, and the value's producer queued behind all of them: a wait
// that blocked its worker's thread would deadlock here. With one worker and parking on, the
// waiters must have parked (the producer could not run before them).
TEST_P(shared_future_in_tasks_test, MoreWaitingTasksThanWorkersWithTheProducerQueuedLast) {
    fj::scheduler sched(workers());
    const int waiters = static_cast<int>(4 * workers() + 3);
    fj::promise<int> value;
    const fj::shared_future<int> shared = value.get_future().share();
    std::vector<fj::future<int>> readers;
    for (int i = 0; i < waiters; ++i)
        readers.push_back(sched.submit([shared, i] { return shared.get() + i; }));
    auto producer = sched.submit([&value] { value.set_value(100); });
    for (int i = 0; i < waiters; ++i)
        EXPECT_EQ(fj_test::get_or(readers[i], -1), 100 + i);
    EXPECT_TRUE(fj_test::get_void(producer));
    if (workers() == 1 && sched.stats().parking) {
        EXPECT_GE(sched.stats().total().parks, 1u);
    }
}

// The same with the value computed by a task that a task forked, and readers forked after it:
// each reader's wait runs the worker's own queued forks first (the producer among them) or parks.
// With parking off the producer computes without waiting: a worker helping inside the producer's
// own join could take a reader, whose wait would then need the producer's frame beneath it to
// return (the cycle in docs/design/parking.md#known-limits, which a waiting producer can close).
TEST_P(shared_future_in_tasks_test, ReadersForkedAfterTheProducerInsideATask) {
    fj::scheduler sched(workers());
    const bool producer_may_wait = sched.stats().parking;
    auto root = sched.submit([producer_may_wait] {
        const fj::shared_future<long> shared =
            fj::fork([producer_may_wait] {
                return producer_may_wait ? fj_test::fib_fork(15) : fj_test::fib_serial(15);
            }).share();
        std::vector<fj::future<long>> readers;
        for (int i = 0; i < 16; ++i)
            readers.push_back(fj::fork([shared] { return shared.get(); }));
        long sum = 0;
        for (auto& r : readers)
            sum += r.get();
        return sum;
    });
    EXPECT_EQ(fj_test::get_or(root, -1L), 16 * fj_test::fib_serial(15));
}

// Fan-out: one shared_future read by a hundred tasks, each seeing the one stored value (not a
// copy of it).
TEST_P(shared_future_test, FanOutToAHundredTasks) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    const auto shared = held_back(sched, release, [] { return std::vector<int>(1000, 2); });
    std::vector<fj::future<bool>> readers;
    for (int i = 0; i < 100; ++i)
        readers.push_back(fj::async(sched, [shared, i] {
            const std::vector<int>& v = shared.get();
            return std::accumulate(v.begin(), v.end(), 0) == 2000 && v[i] == 2;
        }));
    release.store(true);
    int good = 0;
    for (auto& r : readers)
        good += fj_test::get_or(r, false) ? 1 : 0;
    EXPECT_EQ(good, 100);
    ASSERT_TRUE(wait_ready(shared));
    const fj::shared_future<std::vector<int>> copy = shared;
    EXPECT_EQ(&copy.get(), &shared.get());
}

// Values of every kind: a value (const T&), a reference (the same object), void, and a move-only
// type, which every copy reads in place.
TEST_P(shared_future_test, EveryKindOfValue) {
    fj::scheduler sched(workers());
    int target = 5;
    fj::shared_future<int&> reference =
        sched.submit([&target]() -> int& { return target; }).share();
    ASSERT_TRUE(wait_ready(reference));
    EXPECT_EQ(&reference.get(), &target);
    fj::shared_future<int&> reference_copy = reference;
    reference_copy.get() = 9;
    EXPECT_EQ(target, 9);

    std::atomic<bool> ran{false};
    fj::shared_future<void> nothing = sched.submit([&ran] { ran.store(true); }).share();
    ASSERT_TRUE(wait_ready(nothing));
    nothing.get();
    nothing.get();
    EXPECT_TRUE(ran.load()); // ordered by the completion

    auto move_only = sched.submit([] { return std::make_unique<int>(7); }).share();
    const auto move_only_copy = move_only;
    ASSERT_TRUE(wait_ready(move_only_copy));
    const std::unique_ptr<int>& p = move_only.get();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(*p, 7);
    EXPECT_EQ(move_only_copy.get().get(), p.get());

    fj::shared_future<std::string> text(sched.submit([] { return std::string("converted"); }));
    EXPECT_EQ(text.get(), "converted");
}

// A task's exception comes out of every get(), of every copy, on threads and in tasks, again
// and again: always the same stored exception object.
TEST_P(shared_future_test, ExceptionRethrownByEveryGet) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    const fj::shared_future<int> shared =
        held_back(sched, release, []() -> int { throw std::runtime_error("from the task"); });
    std::vector<fj::future<std::exception_ptr>> in_tasks;
    for (int i = 0; i < 4; ++i)
        in_tasks.push_back(sched.submit([shared] { return error_of(shared); }));
    std::vector<std::exception_ptr> on_threads(4);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < on_threads.size(); ++i)
        threads.emplace_back([&on_threads, i, copy = shared] {
            if (wait_ready(copy))
                on_threads[i] = error_of(copy);
        });
    release.store(true);
    for (std::thread& t : threads)
        t.join();
    const std::exception_ptr first = error_of(shared);
    ASSERT_NE(first, nullptr);
    try {
        std::rethrow_exception(first);
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "from the task");
    }
    EXPECT_EQ(error_of(shared), first);
    for (const std::exception_ptr& e : on_threads)
        EXPECT_EQ(e, first);
    for (auto& f : in_tasks)
        EXPECT_EQ(fj_test::get_or(f, std::exception_ptr()), first);
}

// shared_future has no cancel(); a future cancelled before share() gives a ready shared_future
// whose every get() throws the same fj::task_cancelled, and the skipped task still frees its
// state (ASan's leak check) when the worker reaches it.
TEST_P(shared_future_test, CancelledBeforeShare) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    auto blockers = fj_test::occupy_workers(sched, release);
    std::atomic<bool> ran{false};
    fj::future<int> f = sched.submit([&ran] {
        ran.store(true);
        return 1;
    });
    ASSERT_TRUE(f.cancel());
    const fj::shared_future<int> shared = f.share();
    EXPECT_FALSE(f.valid());
    EXPECT_TRUE(shared.is_ready());
    EXPECT_EQ(shared.wait_for(0s), std::future_status::ready);
    shared.wait();
    const fj::shared_future<int> copy = shared;
    const std::exception_ptr first = error_of(shared);
    ASSERT_NE(first, nullptr);
    EXPECT_THROW(std::rethrow_exception(first), fj::task_cancelled);
    EXPECT_EQ(error_of(copy), first);
    auto continued = copy.then([](const int& v) { return v + 1; });
    release.store(true);
    EXPECT_THROW((void)fj_test::get_or(continued, 0), fj::task_cancelled);
    for (auto& b : blockers)
        EXPECT_TRUE(fj_test::get_void(b));
    sched.shutdown(); // the skipped task has been dequeued: its state is freed
    EXPECT_FALSE(ran.load());
}

// Timed waits off the pool: timeout while the task is held back (any clock), then ready; a
// timed-out waiter leaves no trace that the broadcast could touch (ASan, TSan).
TEST_P(shared_future_test, WaitForAndWaitUntilTimeOutThenReady) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    const auto shared = held_back(sched, release, [] { return 3; });
    const auto copy = shared;
    EXPECT_EQ(shared.wait_for(5ms), std::future_status::timeout);
    EXPECT_EQ(copy.wait_until(std::chrono::system_clock::now() + 2ms), std::future_status::timeout);
    EXPECT_EQ(copy.wait_until(std::chrono::steady_clock::now() - 1s), std::future_status::timeout);
    EXPECT_FALSE(shared.is_ready());
    release.store(true);
    EXPECT_EQ(copy.wait_for(fj_test::k_deadline), std::future_status::ready);
    EXPECT_TRUE(shared.is_ready());
    EXPECT_EQ(shared.wait_for(0ms), std::future_status::ready);
    EXPECT_EQ(shared.wait_until(std::chrono::steady_clock::now() - 1s), std::future_status::ready);
    EXPECT_EQ(shared.get() + copy.get(), 6);
}

// Timed waits inside a task (which yield-park or help instead of blocking): timeout, then ready.
// The awaited task runs on another scheduler so the waiting worker cannot run it itself.
TEST_P(shared_future_test, WaitForInsideATaskTimesOutThenReady) {
    fj::scheduler sched(workers());
    fj::scheduler other(1);
    std::atomic<bool> release{false};
    const auto shared = held_back(other, release, [] { return 4; });
    auto waiter = sched.submit([&, shared] {
        const std::future_status first = shared.wait_for(5ms);
        release.store(true);
        const std::future_status second = shared.wait_for(fj_test::k_deadline);
        return std::pair{first, second == std::future_status::ready ? shared.get() : -1};
    });
    ASSERT_TRUE(fj_test::wait_ready(waiter));
    const auto [first, value] = waiter.get();
    EXPECT_EQ(first, std::future_status::timeout);
    EXPECT_EQ(value, 4);
}

// Copies made, assigned and destroyed while other threads and tasks wait on the same core, timed
// waiters timing out around the broadcast, the original dropped before the value arrives: every
// waiter still gets the value, and nothing is touched after it is freed (ASan, TSan). Short
// rounds, each with a fresh shared_future.
TEST_P(shared_future_test, CopiesComeAndGoWhileOthersWait) {
    fj::scheduler sched(workers());
    const std::size_t rounds = scaled(100);
    for (std::size_t round = 0; round < rounds; ++round) {
        fj::promise<int> value;
        auto shared = std::make_unique<fj::shared_future<int>>(value.get_future().share());
        std::atomic<int> good{0};
        std::atomic<bool> stop_churn{false};
        std::vector<std::thread> threads;
        threads.emplace_back([&good, copy = *shared] { // blocks
            if (wait_ready(copy) && copy.get() == 1)
                good.fetch_add(1);
        });
        threads.emplace_back([&good, copy = *shared] { // times out, again and again
            while (copy.wait_for(std::chrono::microseconds(50)) == std::future_status::timeout) {
            }
            if (copy.get() == 1)
                good.fetch_add(1);
        });
        threads.emplace_back([&stop_churn, copy = *shared]() mutable { // copies come and go
            while (!stop_churn.load()) {
                fj::shared_future<int> a = copy;
                fj::shared_future<int> b = std::move(a);
                copy = b;
                a = copy;
            }
        });
        std::vector<fj::future<void>> tasks;
        for (int i = 0; i < 2; ++i)
            tasks.push_back(sched.submit([&good, copy = *shared, i] {
                if (i == 0 ? copy.get() == 1
                           : copy.wait_for(fj_test::k_deadline) == std::future_status::ready &&
                                 copy.get() == 1)
                    good.fetch_add(1);
            }));
        std::thread setter([&value] { value.set_value(1); });
        shared.reset(); // the original goes, maybe before the value arrives
        setter.join();
        for (auto& t : tasks)
            EXPECT_TRUE(fj_test::get_void(t));
        stop_churn.store(true);
        for (std::thread& t : threads)
            t.join();
        ASSERT_EQ(good.load(), 4) << "round " << round;
    }
}

// Dropping every copy (and a continuation's future) before the task finishes returns at once,
// cancels nothing, and frees everything once the task is done: ASan's leak check would report
// the core or the state otherwise.
TEST_P(shared_future_test, DroppingEveryCopyBeforeTheTaskFinishes) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    std::atomic<int> ran{0};
    {
        auto shared = held_back(sched, release, [&ran] {
            ran.fetch_add(1);
            return std::string("unread");
        });
        auto copy = shared;
        (void)copy.then([&ran](const std::string& s) { ran.fetch_add(s == "unread" ? 1 : 100); });
        auto waiting = sched.submit([copy] { return copy.get().size(); });
        EXPECT_EQ(copy.wait_for(1ms), std::future_status::timeout);
        // Every copy goes here, while the task still spins (it waits for `release`, set below).
    }
    release.store(true);
    EXPECT_TRUE(spin_until([&] { return ran.load() == 2; }));
    sched.shutdown();
    EXPECT_EQ(ran.load(), 2);
}

// then(f): f gets const T& (T&, nothing for void) and runs once ready, whether registered before
// or after; the shared_future stays valid and readable; an exception skips f and reaches the
// continuation's future; a failed allocation leaves everything as it was.
TEST_P(shared_future_test, ThenKeepsTheSharedFuture) {
    fj::scheduler sched(workers());
    std::atomic<bool> release{false};
    const auto shared = held_back(sched, release, [] { return std::make_unique<int>(20); });
    auto before = shared.then([](const std::unique_ptr<int>& p) { return *p + 1; });
    auto also_before = shared.then([](const std::unique_ptr<int>& p) { return *p + 2; });
    release.store(true);
    EXPECT_EQ(fj_test::get_or(before, 0), 21);
    EXPECT_EQ(fj_test::get_or(also_before, 0), 22);
    auto after = shared.then([](const std::unique_ptr<int>& p) { return *p + 3; });
    EXPECT_EQ(fj_test::get_or(after, 0), 23);
    EXPECT_TRUE(shared.valid());
    EXPECT_EQ(*shared.get(), 20);

    int target = 1;
    auto reference = sched.submit([&target]() -> int& { return target; }).share();
    auto incremented = reference.then([](int& r) { return ++r; });
    EXPECT_EQ(fj_test::get_or(incremented, 0), 2);
    EXPECT_EQ(&reference.get(), &target);

    auto nothing = sched.submit([] {}).share();
    auto after_void = nothing.then([] { return 5; });
    EXPECT_EQ(fj_test::get_or(after_void, 0), 5);

    auto failing = sched.submit([]() -> int { throw std::runtime_error("antecedent"); }).share();
    std::atomic<bool> skipped_ran{false};
    auto skipped = failing.then([&skipped_ran](const int&) {
        skipped_ran = true;
        return 0;
    });
    EXPECT_THROW((void)fj_test::get_or(skipped, 0), std::runtime_error);
    EXPECT_FALSE(skipped_ran.load());
    EXPECT_THROW((void)failing.get(), std::runtime_error);

    namespace fi = fj::detail::fault_injection;
    fi::arm(fi::site::task_allocation, 0, 1);
    EXPECT_THROW((void)shared.then([](const std::unique_ptr<int>& p) { return *p; }),
                 std::bad_alloc);
    fi::disarm();
    EXPECT_EQ(*shared.get(), 20);
    EXPECT_THROW((void)shared.then(static_cast<int (*)(const std::unique_ptr<int>&)>(nullptr)),
                 std::invalid_argument);
}

// A promise's future shared: copies on threads and in tasks see the value set by a plain thread;
// a promise destroyed without a value is seen as broken_promise by every copy.
TEST_P(shared_future_test, PromiseFutureShared) {
    fj::scheduler sched(workers());
    {
        fj::promise<int> p;
        const fj::shared_future<int> shared = p.get_future().share();
        auto in_task = sched.submit([shared] { return shared.get() * 2; });
        std::atomic<int> on_thread{0};
        std::thread reader(
            [&on_thread, shared] { on_thread = wait_ready(shared) ? shared.get() : -1; });
        std::thread setter([&p] { p.set_value(21); });
        setter.join();
        reader.join();
        EXPECT_EQ(fj_test::get_or(in_task, 0), 42);
        EXPECT_EQ(on_thread.load(), 21);
        EXPECT_EQ(shared.get(), 21);
    }
    {
        auto p = std::make_unique<fj::promise<std::string>>();
        const fj::shared_future<std::string> shared = p->get_future().share();
        auto in_task = sched.submit([shared] { return error_of(shared); });
        std::exception_ptr on_thread;
        std::thread reader([&on_thread, copy = shared] {
            if (wait_ready(copy))
                on_thread = error_of(copy);
        });
        p.reset(); // broken
        reader.join();
        const std::exception_ptr first = error_of(shared);
        EXPECT_EQ(error_code_of([&] { std::rethrow_exception(first); }),
                  std::future_errc::broken_promise);
        EXPECT_EQ(on_thread, first);
        EXPECT_EQ(fj_test::get_or(in_task, std::exception_ptr()), first);
        EXPECT_EQ(error_code_of([&] { (void)shared.get(); }), std::future_errc::broken_promise);
    }
}

INSTANTIATE_TEST_SUITE_P(Workers, shared_future_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);
INSTANTIATE_TEST_SUITE_P(Workers, shared_future_in_tasks_test, ::testing::Values(1, 2, 4),
                         fj_test::worker_count_name);

// Every use of an empty shared_future (default-constructed, moved from, shared from an empty
// future) throws std::future_error(no_state), as fj::future's do; valid(), copies and
// assignment do not.
TEST_F(shared_future_misuse_test, EmptySharedFutureThrowsNoState) {
    fj::shared_future<int> defaulted;
    fj::shared_future<int> source = fj::async([] { return 1; }).share();
    fj::shared_future<int> moved_to = std::move(source);
    fj::future<int> consumed = fj::async([] { return 2; });
    EXPECT_EQ(consumed.get(), 2);
    fj::shared_future<int> from_empty = consumed.share();
    fj::shared_future<void> empty_void;
    const fj::shared_future<int> copy_of_empty = defaulted;
    const fj::shared_future<int>* const empties[] = {&defaulted, &source, &from_empty,
                                                     &copy_of_empty};
    for (const fj::shared_future<int>* f : empties) {
        EXPECT_FALSE(f->valid());
        EXPECT_EQ(error_code_of([&] { (void)f->get(); }), std::future_errc::no_state);
        EXPECT_EQ(error_code_of([&] { f->wait(); }), std::future_errc::no_state);
        EXPECT_EQ(error_code_of([&] { (void)f->wait_for(1ms); }), std::future_errc::no_state);
        EXPECT_EQ(error_code_of([&] { (void)f->wait_until(std::chrono::system_clock::now()); }),
                  std::future_errc::no_state);
        EXPECT_EQ(error_code_of([&] { (void)f->is_ready(); }), std::future_errc::no_state);
        EXPECT_EQ(error_code_of([&] { (void)f->then([](const int& v) { return v; }); }),
                  std::future_errc::no_state);
    }
    EXPECT_EQ(error_code_of([&] { empty_void.get(); }), std::future_errc::no_state);
    EXPECT_TRUE(moved_to.valid());
    EXPECT_EQ(moved_to.get(), 1);

    moved_to = defaulted; // assigning an empty one empties it
    EXPECT_FALSE(moved_to.valid());
    fj::shared_future<int> self = fj::async([] { return 3; }).share();
    fj::shared_future<int>& alias = self;
    self = static_cast<const fj::shared_future<int>&>(alias); // self-assignment keeps the state
    self = std::move(alias);
    ASSERT_TRUE(self.valid());
    EXPECT_EQ(self.get(), 3);
}

} // namespace
