// sort_bench competitors on oneTBB: tbb::parallel_sort, and std::sort(std::execution::par, ...),
// which libstdc++ runs on oneTBB (its parallel backend when <tbb/...> is found; this file is
// compiled only then). Both run inside a task_arena of the requested size, which is where
// libstdc++'s backend puts its tasks too.
#include "competitors/sort_competitor.hpp"

#include <algorithm>
#include <execution>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

namespace fj_perf {
namespace {

template <class Sort>
class tbb_sort_runner final : public sort_runner {
public:
    explicit tbb_sort_runner(int workers) : m_arena(workers) { m_arena.initialize(); }
    void sort(std::vector<std::int32_t>& v) override { run(v, std::less<>{}); }
    void sort(std::vector<double>& v) override { run(v, std::less<>{}); }
    void sort(std::vector<std::string>& v) override { run(v, std::less<>{}); }
    int threads_used(std::vector<std::int32_t>& v) override {
        std::mutex m;
        std::set<std::thread::id> ids;
        run(v, [&](std::int32_t a, std::int32_t b) {
            std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
            return a < b;
        });
        return static_cast<int>(ids.size());
    }

private:
    template <class T, class Comp>
    void run(std::vector<T>& v, Comp comp) {
        m_arena.execute([&] { Sort{}(v, comp); });
    }
    oneapi::tbb::task_arena m_arena;
};

struct tbb_parallel_sort {
    template <class T, class Comp>
    void operator()(std::vector<T>& v, Comp comp) const {
        oneapi::tbb::parallel_sort(v.begin(), v.end(), comp);
    }
};

struct std_par_sort {
    template <class T, class Comp>
    void operator()(std::vector<T>& v, Comp comp) const {
        std::sort(std::execution::par, v.begin(), v.end(), comp);
    }
};

sort_registrar const k_tbb{{"tbb", "tbb::parallel_sort(v.begin(), v.end()) in a task_arena", 20,
                            [](int workers) -> std::unique_ptr<sort_runner> {
                                return std::make_unique<tbb_sort_runner<tbb_parallel_sort>>(
                                    workers);
                            }}};

sort_registrar const k_std_par{
    {"std-par", "std::sort(std::execution::par, ...) (libstdc++, TBB backend) in a task_arena", 30,
     [](int workers) -> std::unique_ptr<sort_runner> {
         return std::make_unique<tbb_sort_runner<std_par_sort>>(workers);
     }}};

} // namespace
} // namespace fj_perf
