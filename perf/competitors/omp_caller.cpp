// caller_bench's calls on OpenMP (libgomp): each call from main is one parallel region of N
// threads, as an OpenMP user writes a parallel hot spot in a serial program. The join is
// `parallel sections` with one section per task (the construct for "run these two blocks in
// parallel" from serial code; a `single` that creates two tasks would add a task per branch to
// the same region); the loops are `parallel for` (default schedule, static in libgomp), the sum
// with `reduction(+ : sum)`. Dynamic adjustment is off, so every region gets N threads. Only this
// file of caller_bench is compiled with the OpenMP flags.
#include "caller_workloads.hpp"

#include <omp.h>

namespace {

using namespace fj_perf::caller;

class omp_runner final : public caller_runner {
public:
    explicit omp_runner(int workers) : m_workers(workers) { omp_set_dynamic(0); }

    void join(int calls) override {
        auto a = [] {};
        auto b = [] {};
        for (int c = 0; c < calls; ++c) {
#pragma omp parallel sections num_threads(m_workers)
            {
#pragma omp section
                a();
#pragma omp section
                b();
            }
        }
    }

    void loop(int calls, int* marks) override {
        for (int c = 0; c < calls; ++c) {
#pragma omp parallel for num_threads(m_workers)
            for (int i = 0; i < k_loop_size; ++i)
                marks[i] += 1;
        }
    }

    double power(std::vector<double>& x, int iterations) override {
        const std::size_t n = x.size();
        double* v = x.data();
        double total = 0;
        for (int it = 0; it < iterations; ++it) {
            double sum = 0;
#pragma omp parallel for num_threads(m_workers) reduction(+ : sum)
            for (std::size_t i = 0; i < n; ++i)
                sum += v[i];
#pragma omp parallel for num_threads(m_workers)
            for (std::size_t i = 0; i < n; ++i)
                v[i] = v[i] * k_scale + k_shift;
            total += sum;
        }
        return total;
    }

private:
    int m_workers;
};

const caller_registrar reg{{"omp",
                            "#pragma omp parallel sections / parallel for [reduction(+:sum)] "
                            "num_threads(N)",
                            [](int workers) -> std::unique_ptr<caller_runner> {
                                return std::make_unique<omp_runner>(workers);
                            }}};

} // namespace
