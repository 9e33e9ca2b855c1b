// The rescue of pools whose tasks block (docs/design/rescue.md): precise (compute-bound tasks
// start no thread), bounded (max_spare_workers), spares retire, fj::blocking hands the work on at
// once, the counters and the trace say what happened, and bad input is refused.
#include "platform/thread_state.hpp"
#include "state/own_wait.hpp"
#include "state/worker_set.hpp"
#include "support.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <latch>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

using fj_test::thread_count;

fj::scheduler make_pool(std::size_t workers, std::size_t max_spares = 256) {
    fj::scheduler_options o;
    o.workers = workers;
    o.max_spare_workers = max_spares;
    return fj::scheduler(o);
}

// Burns CPU for `d` without entering the kernel (steady_clock reads the vDSO).
void compute_for(std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    volatile std::uint64_t x = 1;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 1000; ++i)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
}

class rescue_test : public fj_test::guarded_test {};

TEST_F(rescue_test, the_kernel_state_is_parsed_after_the_last_parenthesis) {
    using fj::detail::kernel_thread_state;
    using fj::detail::parse_thread_stat;
    EXPECT_EQ(parse_thread_stat("123 (worker) R 1 2 3"), kernel_thread_state::running);
    EXPECT_EQ(parse_thread_stat("123 (a) b) S 1 2 3"), kernel_thread_state::blocked);
    EXPECT_EQ(parse_thread_stat("123 (x y) D 1"), kernel_thread_state::blocked);
    EXPECT_EQ(parse_thread_stat("123 (x) T 1"), kernel_thread_state::other);
    EXPECT_EQ(parse_thread_stat("123 (x)"), kernel_thread_state::other);
    EXPECT_EQ(parse_thread_stat(""), kernel_thread_state::other);
    // This thread, reading its own state, is running.
    EXPECT_EQ(fj::detail::read_thread_state(fj::detail::current_thread_id()),
              kernel_thread_state::running);
    EXPECT_EQ(fj::detail::read_thread_state(0), kernel_thread_state::other);
}

TEST_F(rescue_test, a_task_queued_behind_blocked_workers_starts) {
    for (std::size_t workers : {1, 2}) {
        fj::scheduler pool = make_pool(workers);
        std::latch open(1);
        std::vector<fj::future<void>> blocked;
        for (std::size_t i = 0; i < workers; ++i)
            blocked.push_back(fj::async(pool, [&open] { open.wait(); }));
        auto opener = fj::async(pool, [&open] { open.count_down(); });
        EXPECT_TRUE(fj_test::get_void(opener, "the task queued behind blocked workers"));
        for (auto& f : blocked)
            EXPECT_TRUE(fj_test::get_void(f));
        const fj::scheduler_stats s = pool.stats();
        EXPECT_GE(s.rescues, 1u);
        EXPECT_EQ(s.spares_started, s.rescues + s.blocking_handoffs);
    }
}

TEST_F(rescue_test, compute_bound_tasks_start_no_thread) {
    fj::scheduler pool = make_pool(2);
    // Let the pool settle (its workers and monitor are started by now).
    const int before = thread_count();
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 6; ++i) // more than the workers: work stays queued while they compute
        tasks.push_back(fj::async(pool, [] { compute_for(150ms); }));
    for (auto& f : tasks)
        EXPECT_TRUE(fj_test::get_void(f));
    EXPECT_EQ(thread_count(), before);
    EXPECT_EQ(pool.stats().spares_started, 0u) << pool.stats();
}

TEST_F(rescue_test, a_long_loop_costs_one_kernel_state_read_per_look_not_one_per_thread) {
    // Four workers each compute one long task: after the first look none has started a task, so
    // every look finds them all stalled. One read running rules a rescue out, so a look reads one
    // state, and a second only when the first thread was caught in the kernel (a page fault):
    // about one read per look. Without the rule each of the four is read again every 16 ms,
    // about three reads per look.
    constexpr int workers = 4;
    fj::scheduler pool = make_pool(workers);
    std::atomic<int> started{0};
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < workers; ++i)
        tasks.push_back(fj::async(pool, [&started] {
            started.fetch_add(1);
            while (started.load() < workers) // one task per worker: no kernel wait meanwhile
                ;
            compute_for(250ms);
        }));
    for (auto& f : tasks)
        EXPECT_TRUE(fj_test::get_void(f));
    const fj::scheduler_stats s = pool.stats();
    EXPECT_GE(s.monitor_looks, 2u) << s;
    EXPECT_GE(s.monitor_state_reads, 1u) << s;
    EXPECT_LE(2 * s.monitor_state_reads, 3 * s.monitor_looks) << s;
    EXPECT_EQ(s.spares_started, 0u) << s;
}

TEST_F(rescue_test, the_runtimes_threads_carry_names) {
    const auto name_of = [](const std::string& task_dir) {
        std::ifstream in(task_dir + "/comm");
        std::string name;
        std::getline(in, name);
        return name;
    };
    fj::scheduler pool = make_pool(2);
    auto worker = fj::async(pool, [&] { return name_of("/proc/thread-self"); });
    EXPECT_EQ(fj_test::get_or(worker, std::string()), "fj-worker");
    // The monitor names itself before start() returns (the pool waits for its loop).
    int monitors = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
        monitors += name_of(task.path().string()) == "fj-monitor";
    EXPECT_GE(monitors, 1);
}

TEST_F(rescue_test, a_wait_of_the_runtimes_own_never_passes_for_a_block) {
    // The same shape as the rescue above (a task asleep in the kernel, another queued behind it),
    // but the sleep is declared as the runtime's own short wait: some twenty looks of the monitor
    // find it asleep, and none starts a spare.
    fj::scheduler pool = make_pool(1);
    auto declared = fj::async(pool, [] {
        const fj::detail::own_wait_scope own;
        std::this_thread::sleep_for(40ms);
    });
    auto queued = fj::async(pool, [] { return 7; });
    EXPECT_TRUE(fj_test::get_void(declared));
    EXPECT_EQ(fj_test::get_or(queued, 0), 7);
    EXPECT_EQ(pool.stats().spares_started, 0u) << pool.stats();
}

TEST_F(rescue_test, spares_retire_once_idle) {
    fj::scheduler pool = make_pool(1);
    const int before = thread_count();
    std::latch open(1);
    auto blocked = fj::async(pool, [&open] { open.wait(); });
    auto opener = fj::async(pool, [&open] { open.count_down(); });
    EXPECT_TRUE(fj_test::get_void(opener));
    EXPECT_TRUE(fj_test::get_void(blocked));
    EXPECT_TRUE(fj_test::spin_until([&] {
        const auto s = pool.stats();
        return s.spares_running == 0 && s.spares_retired == s.spares_started;
    })) << pool.stats();
    EXPECT_TRUE(fj_test::spin_until([&] { return thread_count() == before; }))
        << thread_count() << " threads, " << before << " before";
    EXPECT_GE(pool.stats().spares_retired, 1u);
}

TEST_F(rescue_test, looks_end_one_past_the_highest_slot_not_vacant) {
    fj::detail::worker_set set(8);
    for (int i = 0; i < 5; ++i)
        set.add([](std::size_t index) {
            return std::make_unique<fj::detail::worker>(nullptr, index, 16);
        });
    EXPECT_EQ(set.scan_end(), 5u);
    set.vacate(2); // below an occupied slot: still looked at
    EXPECT_EQ(set.scan_end(), 5u);
    set.vacate(4);
    EXPECT_EQ(set.scan_end(), 4u);
    set.vacate(3); // the end falls past every vacant slot at the top
    EXPECT_EQ(set.scan_end(), 2u);
    set.occupy(3);
    EXPECT_EQ(set.scan_end(), 4u);
    set.occupy(2);
    EXPECT_EQ(set.scan_end(), 4u);
    set.add(
        [](std::size_t index) { return std::make_unique<fj::detail::worker>(nullptr, index, 16); });
    EXPECT_EQ(set.scan_end(), 6u);
    EXPECT_EQ(set.size(), 6u);
}

TEST_F(rescue_test, the_slots_of_retired_spares_are_not_probed) {
    // Three fj::blocking calls in a row on a pool of one worker: each hands the queued work to a
    // new spare, so three spare slots exist. Once they have retired, the lone worker's looks for
    // work probe no other slot: its spins between tasks add no failed steal.
    fj::scheduler pool = make_pool(1);
    std::vector<fj::future<void>> tasks;
    for (int i = 0; i < 3; ++i)
        tasks.push_back(
            fj::async(pool, [] { fj::blocking([] { std::this_thread::sleep_for(30ms); }); }));
    for (auto& f : tasks)
        EXPECT_TRUE(fj_test::get_void(f));
    ASSERT_GE(pool.stats().spares_started, 1u) << pool.stats();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (pool.stats().spares_running != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    ASSERT_EQ(pool.stats().spares_running, 0u) << pool.stats();
    const std::uint64_t before = pool.stats().workers[0].failed_steals;
    for (int i = 0; i < 5; ++i) {
        auto f = fj::async(pool, [i] { return i; });
        EXPECT_EQ(fj_test::get_or(f, -1), i);
        std::this_thread::sleep_for(1ms); // the worker spins, finds nothing and sleeps
    }
    EXPECT_EQ(pool.stats().workers[0].failed_steals, before) << pool.stats();
}

TEST_F(rescue_test, max_spare_workers_is_never_exceeded) {
    constexpr std::size_t k_max = 2;
    fj::scheduler pool = make_pool(1, k_max);
    std::latch open(1);
    std::atomic<int> started{0};
    std::vector<fj::future<void>> blocked;
    for (int i = 0; i < 6; ++i)
        blocked.push_back(fj::async(pool, [&] {
            started.fetch_add(1);
            open.wait();
        }));
    // The worker and both spares block; then nothing more can start.
    EXPECT_TRUE(fj_test::spin_until([&] { return started.load() == 1 + int(k_max); }));
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(started.load(), 1 + int(k_max));
    EXPECT_LE(pool.stats().spares_running, k_max);
    EXPECT_EQ(pool.stats().spares_started, k_max);
    open.count_down(); // from outside: the rest then run
    for (auto& f : blocked)
        EXPECT_TRUE(fj_test::get_void(f));
    EXPECT_LE(pool.stats().spares_started, 6u);
}

TEST_F(rescue_test, spares_beyond_the_workers_retire_once_blocked_threads_return) {
    fj::scheduler pool = make_pool(1);
    std::latch open(1);
    auto blocked = fj::async(pool, [&open] { open.wait(); });
    // Short tasks, more than enough to keep two threads busy for a while: a spare takes them
    // while the worker is blocked, and must give way once it returns (runners > workers).
    std::atomic<bool> stop{false};
    std::vector<fj::future<void>> work;
    for (int i = 0; i < 400; ++i)
        work.push_back(fj::async(pool, [&stop] {
            if (!stop.load())
                compute_for(2ms);
        }));
    EXPECT_TRUE(fj_test::spin_until([&] { return pool.stats().spares_running >= 1; }));
    open.count_down();
    EXPECT_TRUE(fj_test::get_void(blocked));
    // The spare retires at a task boundary while work is still queued.
    EXPECT_TRUE(fj_test::spin_until([&] { return pool.stats().spares_running == 0; }))
        << pool.stats();
    stop = true;
    for (auto& f : work)
        EXPECT_TRUE(fj_test::get_void(f));
}

TEST_F(rescue_test, zero_spares_turns_the_rescue_off) {
    fj::scheduler pool = make_pool(1, 0);
    std::latch open(1);
    std::atomic<bool> second_ran{false};
    auto blocked = fj::async(pool, [&open] { open.wait(); });
    auto second = fj::async(pool, [&second_ran] { second_ran = true; });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(second_ran.load()); // queued behind the blocked worker, as without the rescue
    open.count_down();
    EXPECT_TRUE(fj_test::get_void(blocked));
    EXPECT_TRUE(fj_test::get_void(second));
    EXPECT_EQ(pool.stats().spares_started, 0u);
}

TEST_F(rescue_test, the_spares_cap_left_unset_scales_with_the_workers) {
    using o = fj::scheduler_options;
    EXPECT_EQ(o::scaled_max_spare_workers(1), 256u);
    EXPECT_EQ(o::scaled_max_spare_workers(64), 256u);
    EXPECT_EQ(o::scaled_max_spare_workers(100), 400u);
    EXPECT_EQ(o::scaled_max_spare_workers(1024), o::max_spare_workers_limit);
    EXPECT_EQ(o::scaled_max_spare_workers(o::max_workers), o::max_spare_workers_limit);
    EXPECT_FALSE(o{}.max_spare_workers.has_value());

    fj::scheduler_options unset;
    unset.workers = 3;
    fj::scheduler pool(unset);
    EXPECT_EQ(pool.options().max_spare_workers, o::scaled_max_spare_workers(3));
    EXPECT_EQ(pool.worker_index_limit(), 3 + 256 + unset.max_callers);
    fj::scheduler off = make_pool(1, 0);
    EXPECT_EQ(off.options().max_spare_workers, 0u);
}

TEST_F(rescue_test, max_spare_workers_out_of_range_is_refused) {
    fj::scheduler_options o;
    o.workers = 1;
    o.max_spare_workers = fj::scheduler_options::max_spare_workers_limit + 1;
    try {
        fj::scheduler pool(o);
        ADD_FAILURE() << "accepted max_spare_workers beyond the limit";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("max_spare_workers"), std::string::npos) << e.what();
    }
}

TEST_F(rescue_test, blocking_hands_the_work_on_at_once) {
    fj::scheduler pool = make_pool(1);
    std::latch open(1);
    std::thread::id before, after;
    auto blocked = fj::async(pool, [&] {
        before = std::this_thread::get_id();
        const int v = fj::blocking([&open] {
            open.wait();
            return 7;
        });
        after = std::this_thread::get_id();
        return v;
    });
    auto opener = fj::async(pool, [&open] { open.count_down(); });
    EXPECT_TRUE(fj_test::get_void(opener));
    EXPECT_EQ(fj_test::get_or(blocked, -1), 7);
    EXPECT_EQ(before, after); // the calling task keeps its thread
    EXPECT_GE(pool.stats().blocking_handoffs, 1u);
}

// Spare and caller slots share one index space: a spare started after main's caller slot was
// made is numbered past workers + max_spare_workers, and its tasks still park (its fiber state
// is there; ASan reports the read past it where it is not). Its thread, like a worker's, runs
// tasks on loop fibers and has a small stack of its own.
TEST_F(rescue_test, a_spare_numbered_after_a_callers_slot_runs_tasks_that_park) {
    fj::scheduler pool = make_pool(1, 1);
    if (!pool.stats().parking)
        GTEST_SKIP() << "parking is off (FJ_PARKING=0): get() may take a task over";
    EXPECT_EQ(pool.execute([] { return fj::current_worker_index(); }), 1u); // main's slot
    std::latch open(1);
    std::atomic<std::size_t> spare_index{0};
    std::atomic<std::size_t> spare_stack{0};
    auto blocked = fj::async(pool, [&] {
        return fj::blocking([&open] {
            open.wait();
            return 2;
        });
    });
    auto handed_on = fj::async(pool, [&] {
        spare_index.store(fj::current_worker_index());
        spare_stack.store(fj_test::running_thread_stack_size());
        auto child = fj::fork([] {
            std::this_thread::sleep_for(1ms);
            return 40;
        });
        const int v = child.get(); // parks on the spare, or runs the child inline
        open.count_down();
        return v;
    });
    EXPECT_EQ(fj_test::get_or(handed_on, -1), 40);
    EXPECT_EQ(fj_test::get_or(blocked, -1), 2);
    EXPECT_GE(pool.stats().spares_started, 1u);
    EXPECT_EQ(spare_index.load(), 2u); // the slot after main's
    EXPECT_GT(spare_stack.load(), 0u);
    EXPECT_LT(spare_stack.load(), fj::scheduler_options{}.worker_stack_size / 8);
}

TEST_F(rescue_test, blocking_keeps_the_callers_forked_children) {
    fj::scheduler pool = make_pool(2);
    auto result = fj::async(pool, [] {
        auto child = fj::fork([] { return 40; });
        const int mid = fj::blocking([] {
            std::this_thread::sleep_for(5ms);
            return 2;
        });
        return child.get() + mid;
    });
    EXPECT_EQ(fj_test::get_or(result, -1), 42);
}

TEST_F(rescue_test, blocking_off_the_pool_just_calls) {
    EXPECT_EQ(fj::blocking([](int a, int b) { return a + b; }, 2, 3), 5);
    int x = 1;
    int& r = fj::blocking([&x]() -> int& { return x; });
    EXPECT_EQ(&r, &x);
    EXPECT_THROW(fj::blocking([] { throw std::runtime_error("inside"); }), std::runtime_error);
}

TEST_F(rescue_test, blocking_rethrows_on_a_worker) {
    fj::scheduler pool = make_pool(1);
    auto f = fj::async(pool, [] {
        return fj::blocking([]() -> int { throw std::runtime_error("from the blocking call"); });
    });
    EXPECT_TRUE(fj_test::wait_ready(f));
    EXPECT_THROW(f.get(), std::runtime_error);
    // The spare started for it retires, and the pool is still usable.
    auto g = fj::async(pool, [] { return 1; });
    EXPECT_EQ(fj_test::get_or(g, 0), 1);
}

TEST_F(rescue_test, blocking_with_an_empty_callable_is_refused) {
    fj::scheduler pool = make_pool(1);
    std::function<int()> empty;
    EXPECT_THROW(fj::blocking(empty), std::invalid_argument);
    int (*null_function)() = nullptr;
    auto f = fj::async(pool, [null_function] { return fj::blocking(null_function); });
    EXPECT_TRUE(fj_test::wait_ready(f));
    EXPECT_THROW(f.get(), std::invalid_argument);
    EXPECT_EQ(pool.stats().blocking_handoffs, 0u); // refused before anything started
    auto g = fj::async(pool, [] { return 2; });
    EXPECT_EQ(fj_test::get_or(g, 0), 2);
}

TEST_F(rescue_test, the_trace_shows_spare_tracks_and_rescues) {
    const std::string path = ::testing::TempDir() + "rescue_trace.json";
    {
        fj::scheduler_options o;
        o.workers = 1;
        o.trace_file = path;
        fj::scheduler pool(o);
        std::latch open(1);
        auto blocked = fj::async(pool, [&open] { open.wait(); });
        auto opener = fj::async(pool, [&open] { open.count_down(); });
        EXPECT_TRUE(fj_test::get_void(opener));
        EXPECT_TRUE(fj_test::get_void(blocked));
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string json = text.str();
    EXPECT_NE(json.find("\"name\":\"spare 1\""), std::string::npos) << json.substr(0, 2000);
    EXPECT_NE(json.find("rescue: spare started"), std::string::npos);
    std::remove(path.c_str());
}

} // namespace
