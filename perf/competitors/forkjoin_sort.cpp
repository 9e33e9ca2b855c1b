// sort_bench competitor: fj::parallel_sort on a pool of the requested size.
#include "competitors/sort_competitor.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <forkjoin/parallel_sort.hpp>
#include <forkjoin/scheduler.hpp>

namespace fj_perf {
namespace {

class forkjoin_sort_runner final : public sort_runner {
public:
    explicit forkjoin_sort_runner(int workers) : m_pool(static_cast<std::size_t>(workers)) {}
    void sort(std::vector<std::int32_t>& v) override { fj::parallel_sort(m_pool, v); }
    void sort(std::vector<double>& v) override { fj::parallel_sort(m_pool, v); }
    void sort(std::vector<std::string>& v) override { fj::parallel_sort(m_pool, v); }
    int threads_used(std::vector<std::int32_t>& v) override {
        std::mutex m;
        std::set<std::thread::id> ids;
        fj::parallel_sort(m_pool, v, [&](std::int32_t a, std::int32_t b) {
            std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
            return a < b;
        });
        return static_cast<int>(ids.size());
    }

private:
    fj::scheduler m_pool;
};

sort_registrar const k_fj{
    {"fj", "fj::parallel_sort(pool, v)", 10, [](int workers) -> std::unique_ptr<sort_runner> {
         return std::make_unique<forkjoin_sort_runner>(workers);
     }}};

} // namespace
} // namespace fj_perf
