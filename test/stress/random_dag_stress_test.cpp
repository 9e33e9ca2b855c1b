// Randomised fork/join DAGs checked against their serial evaluation. Every tree draws its depth,
// its fan-out, its leaves' work and where it throws (std::exception-derived or plain int) from a
// seed; every node picks how it runs its children (fork, join, parallel_reduce, submit plus
// reschedule_until, or a hop to a second scheduler). Several outside threads drive two schedulers
// that feed each other. The seed is fresh each run and printed with any mismatch (replay with
// FJ_STRESS_SEED).
#include "progress_watchdog.hpp"
#include "stress/stress_seed.hpp"
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

// One tree's shape, drawn from its seed.
struct dag_shape {
    int depth = 1;                  // levels below the root
    std::uint64_t max_fan_out = 1;  // an inner node has 1..max_fan_out children
    std::uint64_t max_work = 0;     // a leaf mixes its value 0..max_work times
    std::uint64_t throw_one_in = 0; // a node throws with probability 1/throw_one_in (0: never)
};

dag_shape shape_of(std::uint64_t seed) {
    fj_test::rng random(seed);
    dag_shape s;
    s.max_fan_out = 1 + random.below(6);
    s.depth = 1 + static_cast<int>(random.below(10));
    // At most max_fan_out^depth <= 8192 nodes, so a tree is milliseconds of work.
    const auto nodes_bound = [&] {
        std::uint64_t n = 1;
        for (int d = 0; d < s.depth; ++d)
            n *= s.max_fan_out;
        return n;
    };
    while (s.depth > 1 && nodes_bound() > 8192)
        --s.depth;
    s.max_work = random.below(4) == 0 ? 0 : random.below(2000);
    s.throw_one_in = random.below(3) == 0 ? 0 : 8 + random.below(400);
    return s;
}

std::string describe(const dag_shape& s) {
    return "depth " + std::to_string(s.depth) + ", fan-out 1.." + std::to_string(s.max_fan_out) +
           ", leaf work 0.." + std::to_string(s.max_work) + ", throws " +
           (s.throw_one_in == 0 ? std::string("never") : "1 in " + std::to_string(s.throw_one_in));
}

// --- What a node is, from its seed (the same for the serial and the parallel evaluation) ---------

bool is_leaf(std::uint64_t seed, int depth_left, bool root) {
    return depth_left == 0 || (!root && mix(seed ^ 0x1eafull) % 8 == 0);
}
std::uint64_t fan_out(const dag_shape& s, std::uint64_t seed) {
    return 1 + mix(seed ^ 0xfa40ull) % s.max_fan_out;
}
std::uint64_t child_seed(std::uint64_t seed, std::uint64_t i) {
    return mix(seed * 31 + i + 1);
}
bool throws(const dag_shape& s, std::uint64_t seed) {
    return s.throw_one_in != 0 && mix(seed ^ 0x7e40ull) % s.throw_one_in == 0;
}
// A catcher turns a child's exception into a recovery value; other nodes let it escape.
bool catches(std::uint64_t seed) {
    return mix(seed ^ 0xca7cull) % 3 == 0;
}
long recovery_value(std::uint64_t seed) {
    return 1000 + static_cast<long>(mix(seed ^ 0x5afeull) % 1000);
}

struct node_failure : std::runtime_error {
    node_failure() : std::runtime_error("node failure") {}
};

// A node that throws, throws either a std::exception or something that is not one.
[[noreturn]] void throw_for(std::uint64_t seed) {
    if (mix(seed ^ 0x1234ull) % 2 == 0)
        throw node_failure();
    throw static_cast<int>(seed % 1000);
}

// A leaf's work: max_work bounds how long it computes (task sizes vary across and within trees).
long leaf_value(const dag_shape& s, std::uint64_t seed) {
    const std::uint64_t rounds = s.max_work == 0 ? 0 : mix(seed ^ 0x3013ull) % (s.max_work + 1);
    std::uint64_t x = seed;
    for (std::uint64_t r = 0; r < rounds; ++r)
        x = mix(x + r);
    return static_cast<long>(x % 1000);
}

// A node's value once its children are in: 1 + their sum, or its recovery value / an escaping
// exception if one of them threw; then it may throw itself.
long finish_node(const dag_shape& s, std::uint64_t seed, long children_sum, bool child_threw) {
    long value = children_sum + 1;
    if (child_threw) {
        if (!catches(seed))
            throw_for(seed);
        value = recovery_value(seed);
    }
    if (throws(s, seed))
        throw_for(seed);
    return value;
}

long serial_value(const dag_shape& s, std::uint64_t seed, int depth_left, bool root) {
    if (is_leaf(seed, depth_left, root)) {
        const long v = leaf_value(s, seed);
        if (throws(s, seed))
            throw_for(seed);
        return v;
    }
    long sum = 0;
    bool threw = false;
    for (std::uint64_t i = 0; i < fan_out(s, seed); ++i) {
        try {
            sum += serial_value(s, child_seed(seed, i), depth_left - 1, false);
        } catch (...) {
            threw = true;
        }
    }
    return finish_node(s, seed, sum, threw);
}

// --- The parallel evaluation ---------------------------------------------------------------------

struct dag {
    dag_shape shape;
    std::atomic<std::uint64_t>* nodes; // nodes evaluated, for the throughput figure
};

long parallel_value(const dag& d, fj::scheduler& other, std::uint64_t seed, int depth_left,
                    bool root);

// Children [first, last) of `seed` by recursive fj::join; an exception escapes through join.
long join_children(const dag& d, fj::scheduler& other, std::uint64_t seed, std::uint64_t first,
                   std::uint64_t last, int depth_left) {
    if (last - first == 1)
        return parallel_value(d, other, child_seed(seed, first), depth_left, false);
    const std::uint64_t mid = first + (last - first) / 2;
    auto [a, b] = fj::join([&] { return join_children(d, other, seed, first, mid, depth_left); },
                           [&] { return join_children(d, other, seed, mid, last, depth_left); });
    return a + b;
}

template <class Future>
void collect(Future& f, long& sum, bool& threw) {
    try {
        sum += f.get();
    } catch (...) {
        threw = true;
    }
}

long parallel_value(const dag& d, fj::scheduler& other, std::uint64_t seed, int depth_left,
                    bool root) {
    d.nodes->fetch_add(1, std::memory_order_relaxed);
    const dag_shape& s = d.shape;
    if (is_leaf(seed, depth_left, root)) {
        const long v = leaf_value(s, seed);
        if (throws(s, seed))
            throw_for(seed);
        return v;
    }
    const std::uint64_t n = fan_out(s, seed);
    const int below = depth_left - 1;
    long sum = 0;
    bool threw = false;
    const auto child = [&d, &other, seed, below](std::uint64_t i) {
        return parallel_value(d, other, child_seed(seed, i), below, false);
    };
    const auto inline_last = [&] {
        try {
            sum += child(n - 1);
        } catch (...) {
            threw = true;
        }
    };
    switch (mix(seed ^ 0x57a7ull) % 5) {
    case 0: { // fork all but the last child, run that one here, then get the rest
        std::vector<fj::future<long>> forked;
        for (std::uint64_t i = 0; i + 1 < n; ++i)
            forked.push_back(fj::fork([child, i] { return child(i); }));
        inline_last();
        for (auto& f : forked)
            collect(f, sum, threw);
        break;
    }
    case 1: // recursive join
        try {
            sum = join_children(d, other, seed, 0, n, below);
        } catch (...) {
            threw = true;
        }
        break;
    case 2: // parallel_reduce over the children
        try {
            sum = fj::parallel_reduce(std::uint64_t{0}, n, 0L, child, std::plus<>{});
        } catch (...) {
            threw = true;
        }
        break;
    case 3: { // submit to this scheduler, then help with reschedule_until
        std::vector<fj::future<long>> submitted;
        for (std::uint64_t i = 0; i + 1 < n; ++i)
            submitted.push_back(fj::current_scheduler().submit([child, i] { return child(i); }));
        inline_last();
        fj::reschedule_until([&] {
            for (auto& f : submitted)
                if (!f.is_ready())
                    return false;
            return true;
        });
        for (auto& f : submitted)
            collect(f, sum, threw);
        break;
    }
    default: { // hop to the other scheduler (near the leaves only: bounded cross-waiting)
        std::vector<fj::future<long>> hopped;
        fj::scheduler& here = fj::current_scheduler();
        for (std::uint64_t i = 0; i + 1 < n; ++i) {
            if (below <= 2)
                hopped.push_back(other.submit([&d, &here, seed, below, i] {
                    return parallel_value(d, here, child_seed(seed, i), below, false);
                }));
            else
                hopped.push_back(fj::fork([child, i] { return child(i); }));
        }
        inline_last();
        for (auto& f : hopped)
            collect(f, sum, threw);
        break;
    }
    }
    return finish_node(s, seed, sum, threw);
}

// The outcome of evaluating a tree: a value, or "threw".
struct outcome {
    bool threw = false;
    long value = 0;
    bool operator==(const outcome&) const = default;
};

std::string to_string(const outcome& o) {
    return o.threw ? std::string("an exception") : std::to_string(o.value);
}

template <class Evaluate>
outcome evaluate(Evaluate&& e) {
    try {
        return {false, e()};
    } catch (...) {
        return {true, 0};
    }
}

class random_dag_stress_test : public fj_test::workers_test {};

TEST_P(random_dag_stress_test, random_dags_match_their_serial_evaluation) {
    fj::scheduler a(workers());
    fj::scheduler b(workers());
    fj_test::progress_watchdog dog(fj_test::current_test_name());
    auto watch_a = dog.watch(a, "a");
    auto watch_b = dog.watch(b, "b");
    const std::uint64_t base_seed = fj_test::stress_seed();
    constexpr int drivers = 3;
    const std::size_t trees_per_driver = fj_test::scaled(200);
    std::atomic<std::uint64_t> nodes{0};
    std::atomic<std::size_t> threw{0};
    std::mutex failure_mutex;
    std::vector<std::string> failures; // guarded by failure_mutex

    const auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < drivers; ++t)
        threads.emplace_back([&, t] {
            for (std::size_t i = 0; i < trees_per_driver; ++i) {
                const std::uint64_t seed =
                    mix(base_seed + static_cast<std::uint64_t>(t) * 1'000'003 + i);
                // Owned by the root task too: a tree that hangs past its deadline must not be
                // left reading a dead driver's stack.
                const auto d = std::make_shared<const dag>(dag{shape_of(seed), &nodes});
                fj::scheduler& here = (i + static_cast<std::size_t>(t)) % 2 == 0 ? a : b;
                fj::scheduler& there = &here == &a ? b : a;
                auto f = here.submit([d, &there, seed] {
                    return evaluate(
                        [&] { return parallel_value(*d, there, seed, d->shape.depth, true); });
                });
                std::string failure;
                const bool hung = f.wait_for(fj_test::k_deadline) != std::future_status::ready;
                if (hung) {
                    failure = "did not finish within " +
                              std::to_string(fj_test::k_deadline.count()) + " s\n" +
                              fj_test::state_of(a, "a") + fj_test::state_of(b, "b");
                } else {
                    const outcome got = f.get();
                    const outcome want = evaluate(
                        [&] { return serial_value(d->shape, seed, d->shape.depth, true); });
                    if (got.threw)
                        threw.fetch_add(1, std::memory_order_relaxed);
                    if (!(got == want))
                        failure =
                            "gave " + to_string(got) + ", the serial evaluation " + to_string(want);
                }
                if (!failure.empty()) {
                    std::lock_guard lock(failure_mutex);
                    failures.push_back("tree " + std::to_string(i) + " of driver " +
                                       std::to_string(t) + " (" + describe(d->shape) + ") " +
                                       failure);
                    std::fprintf(stderr, "%s\n", failures.back().c_str()); // in case of a hang
                    if (hung)
                        return; // this driver stops; the others finish their trees
                }
                dog.tick();
            }
        });
    for (auto& t : threads)
        t.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    for (std::size_t i = 0; i < failures.size() && i < 10; ++i)
        ADD_FAILURE() << failures[i] << "\n" << fj_test::replay_hint(base_seed);
    EXPECT_TRUE(failures.empty()) << failures.size() << " trees went wrong; "
                                  << fj_test::replay_hint(base_seed);
    // Tasks the workers ran (fork, join, submit, parallel_reduce's pieces, hops), per second,
    // serial checks and leaf work included: the load this run held.
    const std::uint64_t tasks = a.stats().total().tasks_run + b.stats().total().tasks_run;
    std::printf("%zu trees, %llu nodes (%zu threw at the root), %llu tasks in %.2f s: %.0f "
                "tasks/s\n",
                trees_per_driver * drivers, static_cast<unsigned long long>(nodes.load()),
                threw.load(), static_cast<unsigned long long>(tasks), seconds,
                static_cast<double>(tasks) / seconds);
}

INSTANTIATE_TEST_SUITE_P(workers, random_dag_stress_test, fj_test::worker_counts(),
                         fj_test::worker_count_name);

} // namespace
