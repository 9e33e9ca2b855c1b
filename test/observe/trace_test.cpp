// Trace mode (docs/tracing.md): the file is valid JSON, every worker's track is well nested and in
// time order, and the events agree with the scheduler's statistics one for one.
#include "json_lite.hpp"
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <forkjoin/latch.hpp>
#include <forkjoin/this_task.hpp>

namespace {

namespace json = fj_test::json;

// Unique per test and process: a file collects every scheduler traced into it during the run.
std::string temp_trace_path(const std::string& tag) {
    std::string name = fj_test::current_test_name();
    for (char& c : name)
        if (c == '/' || c == '.')
            c = '_';
    return (std::filesystem::temp_directory_path() /
            ("fj_trace_" + name + "_" + tag + "_" + std::to_string(::getpid()) + ".json"))
        .string();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// What a parsed trace holds, per scheduler (pid).
struct trace_summary {
    std::map<std::string, std::uint64_t> slices;   // B events by name
    std::map<std::string, std::uint64_t> instants; // i events by name
    std::set<std::int64_t> worker_tracks;          // tids with a thread_name
    std::set<std::string> track_names;             // their names
    std::string process_name;
};

// Checks the structure (every track in time order, B/E properly nested with matching names,
// nothing left open) and counts the events of each scheduler.
std::map<std::int64_t, trace_summary> check_trace(const json::value& doc) {
    std::map<std::int64_t, trace_summary> by_pid;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::string>> open;
    std::map<std::pair<std::int64_t, std::int64_t>, double> last_ts;
    const json::value& events = doc.at("traceEvents");
    EXPECT_EQ(events.type, json::value::kind::array);
    for (const json::value& e : events.array) {
        const std::string& ph = e.at("ph").string;
        const std::string& name = e.at("name").string;
        const auto pid = static_cast<std::int64_t>(e.at("pid").number);
        if (ph == "M") {
            if (name == "process_name")
                by_pid[pid].process_name = e.at("args").at("name").string;
            if (name == "thread_name") {
                by_pid[pid].worker_tracks.insert(static_cast<std::int64_t>(e.at("tid").number));
                by_pid[pid].track_names.insert(e.at("args").at("name").string);
            }
            continue;
        }
        const std::pair track{pid, static_cast<std::int64_t>(e.at("tid").number)};
        const double ts = e.at("ts").number;
        EXPECT_GE(ts, last_ts[track])
            << "track " << track.first << "/" << track.second << " goes back in time at " << name;
        last_ts[track] = ts;
        if (ph == "B") {
            open[track].push_back(name);
            ++by_pid[pid].slices[name];
        } else if (ph == "E") {
            if (open[track].empty()) {
                ADD_FAILURE() << "E without B on track " << track.first << "/" << track.second;
                continue;
            }
            EXPECT_EQ(open[track].back(), name) << "E closes another slice";
            open[track].pop_back();
        } else if (ph == "i") {
            EXPECT_EQ(e.at("s").string, "t");
            ++by_pid[pid].instants[name];
        } else {
            ADD_FAILURE() << "unexpected phase " << ph;
        }
    }
    for (const auto& [track, names] : open)
        EXPECT_TRUE(names.empty())
            << names.size() << " slices left open on track " << track.first << "/" << track.second;
    return by_pid;
}

using fj_test::fib_fork;
using fj_test::fib_join;

// Forks, joins, stolen and parked waits, outside submissions, and idle periods (sleeps).
void run_mixed_workload(fj::scheduler& pool) {
    for (int round = 0; round < 3; ++round) {
        auto a = pool.submit([] { return fib_fork(16); });
        auto b = pool.submit([] { return fib_join(16); });
        std::vector<fj::future<int>> small;
        for (int i = 0; i < 20; ++i)
            small.push_back(pool.submit([i] { return i; }));
        EXPECT_EQ(fj_test::get_or(a, -1L), 987);
        EXPECT_EQ(fj_test::get_or(b, -1L), 987);
        for (int i = 0; i < 20; ++i)
            EXPECT_EQ(fj_test::get_or(small[static_cast<std::size_t>(i)], -1), i);
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // let the workers sleep
    }
}

void expect_matches_stats(const trace_summary& t, const fj::scheduler_stats& stats) {
    const fj::worker_stats total = stats.total();
    EXPECT_EQ(t.slices.count("task") ? t.slices.at("task") : 0, total.tasks_run);
    EXPECT_EQ(t.slices.count("sleep") ? t.slices.at("sleep") : 0, total.sleeps);
    const auto instants = [&](const char* name) {
        return t.instants.count(name) ? t.instants.at(name) : 0;
    };
    EXPECT_EQ(instants("steal"), total.steals);
    EXPECT_EQ(instants("injected"), total.injected_taken);
    EXPECT_EQ(instants("park"), total.parks);
    EXPECT_EQ(instants("resume"), total.resumes);
    // Every resumption reopens at least the slice of the task that parked.
    const std::uint64_t reopened =
        t.slices.count("task (resumed)") ? t.slices.at("task (resumed)") : 0;
    EXPECT_GE(reopened, total.resumes);
    EXPECT_EQ(t.worker_tracks.size(), stats.workers.size());
    EXPECT_GT(total.tasks_run, 0u);
}

struct trace_case {
    std::size_t workers;
    bool parking;
};

class trace_modes : public ::testing::TestWithParam<trace_case> {};

TEST_P(trace_modes, file_is_well_nested_and_matches_the_statistics) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("modes");
    fj::scheduler_options options;
    options.workers = GetParam().workers;
    options.park_waiting_tasks = GetParam().parking;
    options.trace_file = path;
    fj::scheduler_stats stats;
    {
        fj::scheduler pool(options);
        run_mixed_workload(pool);
        pool.shutdown();
        stats = pool.stats();
    }
    const json::value doc = json::parse(read_file(path));
    const auto by_pid = check_trace(doc);
    std::size_t schedulers = 0;
    for (const auto& [pid, summary] : by_pid) {
        if (pid == 0)
            continue; // the file's own metadata record
        ++schedulers;
        EXPECT_NE(summary.process_name.find("fj::scheduler #"), std::string::npos);
        expect_matches_stats(summary, stats);
    }
    EXPECT_EQ(schedulers, 1u);
    if (!GetParam().parking) {
        EXPECT_EQ(stats.total().parks, 0u);
    }
    std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(trace, trace_modes,
                         ::testing::Values(trace_case{1, true}, trace_case{2, true},
                                           trace_case{4, true}, trace_case{2, false}),
                         [](const auto& info) {
                             return std::to_string(info.param.workers) + "_workers_" +
                                    (info.param.parking ? "parking" : "helping");
                         });

// A thread outside the pool running its own calls (docs/design/callers.md) has a track of its
// own, named for its caller's slot, whose tasks and steals are counted with the rest.
TEST(trace, a_caller_has_its_own_track) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("caller");
    fj::scheduler_options options;
    options.workers = 2;
    options.trace_file = path;
    fj::scheduler_stats stats;
    {
        fj::scheduler pool(options);
        for (int i = 0; i < 5; ++i) {
            EXPECT_EQ(pool.execute([] { return fib_join(14); }), 377);
            fj::parallel_for(pool, 0, 1000, [](int) {});
        }
        pool.shutdown();
        stats = pool.stats();
    }
    const json::value doc = json::parse(read_file(path));
    const auto by_pid = check_trace(doc);
    std::size_t callers = 0;
    for (const fj::worker_stats& w : stats.workers)
        callers += w.caller ? 1 : 0;
    EXPECT_EQ(callers, 1u);
    for (const auto& [pid, summary] : by_pid) {
        if (pid == 0)
            continue;
        expect_matches_stats(summary, stats);
        EXPECT_EQ(summary.track_names.count("caller 2"), 1u); // after workers 0 and 1
    }
    std::filesystem::remove(path);
}

// A park on a task-parking primitive names it (docs/sync.md), and is counted in sync_parks.
TEST(trace, a_park_on_a_primitive_names_it) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("primitives");
    fj::scheduler_options options;
    options.workers = 2;
    options.trace_file = path;
    fj::scheduler_stats stats;
    {
        fj::scheduler pool(options);
        if (!pool.stats().parking)
            GTEST_SKIP() << "parking is off (FJ_PARKING=0)";
        fj::latch meet(4);
        std::vector<fj::future<void>> tasks;
        for (int i = 0; i < 4; ++i)
            tasks.push_back(pool.submit([&] {
                meet.arrive_and_wait();
                fj::this_task::sleep_for(std::chrono::milliseconds(1));
            }));
        for (auto& t : tasks)
            EXPECT_TRUE(fj_test::get_void(t));
        pool.shutdown();
        stats = pool.stats();
    }
    const std::string text = read_file(path);
    (void)check_trace(json::parse(text));
    auto count = [&](const std::string& needle) {
        std::size_t n = 0;
        for (std::size_t at = text.find(needle); at != std::string::npos;
             at = text.find(needle, at + 1))
            ++n;
        return n;
    };
    const std::size_t latch_parks = count("\"on\":\"fj::latch\"");
    const std::size_t sleep_parks = count("\"on\":\"fj::this_task::sleep\"");
    EXPECT_GE(latch_parks, 1u); // the first three to arrive wait (the last may find it open)
    EXPECT_EQ(sleep_parks, 4u);
    EXPECT_EQ(stats.total().sync_parks, latch_parks + sleep_parks);
    std::filesystem::remove(path);
}

// Parked tasks reopen their slices where they resume: many waits on stolen children that take a
// while, so parks and migrations are frequent.
TEST(trace, parked_and_migrated_tasks_keep_tracks_nested) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("parks");
    fj::scheduler_options options;
    options.workers = 2;
    options.trace_file = path;
    fj::scheduler_stats stats;
    {
        fj::scheduler pool(options);
        auto root = pool.submit([] {
            long sum = 0;
            for (int i = 0; i < static_cast<int>(fj_test::scaled(200)); ++i) {
                auto child = fj::fork([] {
                    std::this_thread::sleep_for(std::chrono::microseconds(50));
                    return 1L;
                });
                auto other = fj::fork([] { return fib_fork(10); });
                sum += other.get() + child.get();
            }
            return sum;
        });
        EXPECT_GT(fj_test::get_or(root, -1L), 0);
        pool.shutdown();
        stats = pool.stats();
    }
    const auto by_pid = check_trace(json::parse(read_file(path)));
    ASSERT_EQ(by_pid.size(), 2u); // pid 0 (the file) and the pool
    expect_matches_stats(by_pid.rbegin()->second, stats);
    std::cout << stats; // how many parks and migrations this run exercised
    std::filesystem::remove(path);
}

TEST(trace, schedulers_sharing_a_file_each_appear_as_a_process) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("shared");
    fj::scheduler_options options;
    options.workers = 2;
    options.trace_file = path;
    std::vector<fj::scheduler_stats> stats;
    for (int i = 0; i < 3; ++i) {
        fj::scheduler pool(options);
        auto f = pool.submit([] { return fib_fork(12); });
        EXPECT_EQ(fj_test::get_or(f, -1L), 144);
        pool.shutdown();
        stats.push_back(pool.stats());
    }
    const auto by_pid = check_trace(json::parse(read_file(path)));
    ASSERT_EQ(by_pid.size(), 4u); // pid 0 and three pools, in creation (= id) order
    std::size_t i = 0;
    for (const auto& [pid, summary] : by_pid)
        if (pid != 0)
            expect_matches_stats(summary, stats.at(i++));
    std::filesystem::remove(path);
}

TEST(trace, environment_variable_turns_tracing_on) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("env");
    ASSERT_EQ(::setenv("FJ_TRACE", path.c_str(), 1), 0);
    {
        fj::scheduler pool(2);
        EXPECT_EQ(pool.options().trace_file, path);
        auto f = pool.submit([] { return fib_fork(10); });
        EXPECT_EQ(fj_test::get_or(f, -1L), 55);
    }
    ::unsetenv("FJ_TRACE");
    {
        fj::scheduler untraced(1); // off again: no file named after it
        EXPECT_TRUE(untraced.options().trace_file.empty());
    }
    const auto by_pid = check_trace(json::parse(read_file(path)));
    EXPECT_EQ(by_pid.size(), 2u);
    std::filesystem::remove(path);
}

TEST(trace, full_buffer_drops_events_but_the_file_stays_well_nested) {
    fj_test::watchdog dog(fj_test::current_test_name());
    const std::string path = temp_trace_path("full");
    fj::scheduler_options options;
    options.workers = 2;
    options.trace_file = path;
    options.trace_events_per_worker = 1024; // fib(20) runs ~22,000 tasks
    testing::internal::CaptureStderr();
    {
        fj::scheduler pool(options);
        auto f = pool.submit([] { return fib_join(20); });
        EXPECT_EQ(fj_test::get_or(f, -1L), 6765);
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("events dropped"), std::string::npos) << err;
    const std::string text = read_file(path);
    const auto by_pid = check_trace(json::parse(text));
    EXPECT_EQ(by_pid.size(), 2u);
    EXPECT_NE(text.find("trace_events_per_worker"), std::string::npos); // the file says so too
    std::filesystem::remove(path);
}

TEST(trace, unwritable_file_is_reported_and_shutdown_still_finishes) {
    fj_test::watchdog dog(fj_test::current_test_name());
    fj::scheduler_options options;
    options.workers = 1;
    options.trace_file = "/nonexistent-directory/trace.json";
    testing::internal::CaptureStderr();
    std::atomic<int> ran{0};
    {
        fj::scheduler pool(options);
        for (int i = 0; i < 10; ++i)
            pool.submit([&] { ran.fetch_add(1); });
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(ran.load(), 10); // nothing lost
    EXPECT_NE(err.find("cannot write the trace file '/nonexistent-directory/trace.json'"),
              std::string::npos)
        << err;
}

TEST(trace, too_small_buffer_is_rejected) {
    fj::scheduler_options options;
    options.workers = 1;
    options.trace_file = temp_trace_path("small");
    options.trace_events_per_worker = 10;
    EXPECT_THROW(
        {
            try {
                fj::scheduler pool(options);
            } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("trace_events_per_worker"), std::string::npos);
                throw;
            }
        },
        std::invalid_argument);
}

TEST(trace, parser_rejects_malformed_json) { // the checker itself can fail
    EXPECT_THROW(json::parse("{\"a\":[1,2}"), std::runtime_error);
    EXPECT_THROW(json::parse("{\"a\":1} x"), std::runtime_error);
    EXPECT_EQ(json::parse("{\"a\":[1.5e3,true,null,\"x\\n\"]}").at("a").array.at(0).number, 1500);
}

} // namespace
