// Relacy's atomics behind the interface of std::atomic, for instantiating the runtime's protocol
// classes in the model tests (the seam is runtime/include/forkjoin/detail/atomics.hpp).
//
// Relacy's own umbrella, <relacy/relacy.hpp>, also defines macros (new, delete, malloc, free,
// assert, errno, memory_order_*) that would rewrite the code under test and GoogleTest's; this
// header includes the parts of Relacy the models use and none of those macros. What remains is
// Relacy's `$` (the call site, for rl::var accesses) and RL_ASSERT. Include it after the code under
// test all the same, so that `$` cannot reach it.
//
// Mutants. A model that cannot fail is not a check, so each model test also runs the protocol with
// one memory order weakened, and expects Relacy to reject it. The weakening is done here, on the
// production code's own call: a mutation names the function (a substring of its
// std::source_location::function_name()), the kind of access and the order it weakens.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <new>
#include <optional>
#include <ostream>
#include <relacy/atomic.hpp>
#include <relacy/atomic_fence.hpp>
#include <relacy/backoff.hpp>
#include <relacy/base.hpp>
#include <relacy/context.hpp>
#include <relacy/context_base_impl.hpp>
#include <relacy/stdlib/condition_variable.hpp>
#include <relacy/stdlib/event.hpp>
#include <relacy/stdlib/mutex.hpp>
#include <relacy/stdlib/semaphore.hpp>
#include <relacy/test_suite.hpp>
#include <relacy/var.hpp>
#include <source_location>
#include <streambuf>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace fj::model {

enum class access { load, store, read_modify_write, compare_exchange, fence };

struct mutation {
    std::string_view function; // a substring of the calling function's name
    access kind;
    std::memory_order from;
    std::memory_order to;
};

// The mutation in force; none in a normal model run. Relacy runs every modelled thread on one
// operating-system thread, so a plain global is enough.
inline std::optional<mutation> g_mutation;
inline int g_mutations_applied = 0;

inline std::memory_order mutated(std::memory_order order, access kind,
                                 const std::source_location& where) {
    if (g_mutation && g_mutation->kind == kind && g_mutation->from == order &&
        std::string_view(where.function_name()).find(g_mutation->function) !=
            std::string_view::npos) {
        ++g_mutations_applied;
        return g_mutation->to;
    }
    return order;
}

inline rl::memory_order to_relacy(std::memory_order order) {
    switch (order) {
    case std::memory_order::relaxed:
        return rl::mo_relaxed;
    case std::memory_order::consume:
        return rl::mo_consume;
    case std::memory_order::acquire:
        return rl::mo_acquire;
    case std::memory_order::release:
        return rl::mo_release;
    case std::memory_order::acq_rel:
        return rl::mo_acq_rel;
    case std::memory_order::seq_cst:
        return rl::mo_seq_cst;
    }
    return rl::mo_seq_cst;
}

// The failure order of a compare-exchange cannot be stronger than its success order in Relacy
// either; a weakened success order takes the failure order down with it.
inline std::memory_order failure_order_within(std::memory_order success,
                                              std::memory_order failure) {
    if (success == std::memory_order::relaxed || success == std::memory_order::release)
        return std::memory_order::relaxed;
    if (failure == std::memory_order::seq_cst && success != std::memory_order::seq_cst)
        return std::memory_order::acquire;
    return failure;
}

inline rl::debug_info info(const std::source_location& where) {
    return rl::debug_info(where.function_name(), where.file_name(), where.line());
}

template <class T>
class relacy_atomic {
    using here = std::source_location;

public:
    // Value-initialised, as std::atomic's default constructor is (C++20).
    relacy_atomic() : m_atomic(T()) {}
    relacy_atomic(T initial) : m_atomic(initial) {}
    relacy_atomic(const relacy_atomic&) = delete;
    relacy_atomic& operator=(const relacy_atomic&) = delete;

    T load(std::memory_order order = std::memory_order::seq_cst,
           here where = here::current()) const {
        return m_atomic.load(to_relacy(mutated(order, access::load, where)), info(where));
    }
    void store(T value, std::memory_order order = std::memory_order::seq_cst,
               here where = here::current()) {
        m_atomic.store(value, to_relacy(mutated(order, access::store, where)), info(where));
    }
    T exchange(T value, std::memory_order order = std::memory_order::seq_cst,
               here where = here::current()) {
        return m_atomic.exchange(value, rmw(order, where), info(where));
    }
    T fetch_add(T value, std::memory_order order = std::memory_order::seq_cst,
                here where = here::current()) {
        return m_atomic.fetch_add(value, rmw(order, where), info(where));
    }
    T fetch_sub(T value, std::memory_order order = std::memory_order::seq_cst,
                here where = here::current()) {
        return m_atomic.fetch_sub(value, rmw(order, where), info(where));
    }
    T fetch_or(T value, std::memory_order order = std::memory_order::seq_cst,
               here where = here::current()) {
        return m_atomic.fetch_or(value, rmw(order, where), info(where));
    }
    T fetch_and(T value, std::memory_order order = std::memory_order::seq_cst,
                here where = here::current()) {
        return m_atomic.fetch_and(value, rmw(order, where), info(where));
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                                 std::memory_order failure, here where = here::current()) {
        const std::memory_order weakened = mutated(success, access::compare_exchange, where);
        return m_atomic.compare_exchange_strong(expected, desired, to_relacy(weakened), info(where),
                                                to_relacy(failure_order_within(weakened, failure)),
                                                info(where));
    }
    bool compare_exchange_strong(T& expected, T desired,
                                 std::memory_order order = std::memory_order::seq_cst,
                                 here where = here::current()) {
        return compare_exchange_strong(expected, desired, order, failure_for(order), where);
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                               std::memory_order failure, here where = here::current()) {
        const std::memory_order weakened = mutated(success, access::compare_exchange, where);
        return m_atomic.compare_exchange_weak(expected, desired, to_relacy(weakened), info(where),
                                              to_relacy(failure_order_within(weakened, failure)),
                                              info(where));
    }
    bool compare_exchange_weak(T& expected, T desired,
                               std::memory_order order = std::memory_order::seq_cst,
                               here where = here::current()) {
        return compare_exchange_weak(expected, desired, order, failure_for(order), where);
    }

private:
    static rl::memory_order rmw(std::memory_order order, const here& where) {
        return to_relacy(mutated(order, access::read_modify_write, where));
    }
    static std::memory_order failure_for(std::memory_order order) {
        if (order == std::memory_order::acq_rel)
            return std::memory_order::acquire;
        if (order == std::memory_order::release)
            return std::memory_order::relaxed;
        return order;
    }

    rl::atomic<T> m_atomic;
};

// std::mutex's interface over Relacy's mutex, for a protocol that also takes its mutex as a
// template parameter (the shared future's listener list, the pipeline's run).
class relacy_mutex {
public:
    void lock(std::source_location where = std::source_location::current()) {
        m_mutex.lock(info(where));
    }
    void unlock(std::source_location where = std::source_location::current()) {
        m_mutex.unlock(info(where));
    }

private:
    rl::mutex m_mutex;
};

// The atomics policy (see forkjoin/detail/atomics.hpp) the model tests instantiate protocols with.
struct relacy_atomics {
    template <class T>
    using atomic = relacy_atomic<T>;

    static void thread_fence(std::memory_order order,
                             std::source_location where = std::source_location::current()) {
        rl::atomic_thread_fence(to_relacy(mutated(order, access::fence, where)), info(where));
    }

    // The asymmetric barrier pair (forkjoin/detail/asymmetric_barrier.hpp) as the fences it stands
    // for. heavy_barrier() makes every running thread execute a full barrier, so it is a seq_cst
    // fence here and on the light side, which stays in program order with the heavy one's effect:
    // stronger than a compiler barrier alone, but the pair's guarantee is exactly what two seq_cst
    // fences give (either the light side's load sees the heavy side's store or the heavy side's
    // load sees the light side's store). Mutants weaken them as fences.
    // `asymmetric` picks the formulation a scenario exercises (true: the membarrier one).
    static inline bool asymmetric = true;
    static bool asymmetric_barrier_registered() { return asymmetric; }
    static bool asymmetric_barrier_available() { return asymmetric; }
    static void light_barrier(std::source_location where = std::source_location::current()) {
        thread_fence(std::memory_order::seq_cst, where);
    }
    static void heavy_barrier(std::source_location where = std::source_location::current()) {
        thread_fence(std::memory_order::seq_cst, where);
    }

    // A spin loop's pause and yield (forkjoin/detail/cpu_relax.hpp): both yield to Relacy's
    // scheduler, which runs the other threads, so that a spin waiting on another thread's step is
    // neither a preemption spent nor a livelock.
    static void cpu_relax(std::source_location where = std::source_location::current()) {
        rl::yield(1, info(where));
    }
    static void yield_thread(std::source_location where = std::source_location::current()) {
        rl::yield(1, info(where));
    }
};

// A named mutation, for parameterised mutant tests (INSTANTIATE_TEST_SUITE_P(..., mutant_name)).
struct mutant {
    const char* name;
    mutation change;
    friend void PrintTo(const mutant& m, std::ostream* out) { *out << m.name; }
};

inline std::string mutant_name(const testing::TestParamInfo<mutant>& info) {
    return info.param.name;
}

// How a scenario is searched: every interleaving (sched_full), every interleaving with at most
// `context_bound` preemptions (sched_bound), or `iterations` random ones (sched_random).
struct search {
    rl::scheduler_type_e kind = rl::sched_full;
    unsigned context_bound = 1; // for rl::sched_bound
    unsigned iterations = 0;    // for rl::sched_random
};

struct outcome {
    bool passed = false;
    std::uint64_t explored = 0;
    std::string report;
    int mutations_applied = 0; // accesses the mutation weakened: 0 means it matched nothing
};

// Relacy replaces the global operator new and delete with its own, which schedule and check while
// a search runs, and it writes a failing execution's history from inside the search: a stream that
// allocates as it grows would re-enter the checker. This one writes into a fixed buffer and keeps
// the first 64 KiB.
class report_buffer : public std::streambuf {
public:
    report_buffer() { setp(m_text, m_text + sizeof m_text); }
    std::string text() const { return std::string(pbase(), pptr()); }

protected:
    int_type overflow(int_type c) override { return traits_type::not_eof(c); } // full: drop

private:
    char m_text[64 * 1024];
};

// Runs one Relacy search of `Scenario`, with `mutant` in force if given, and reports whether it
// found no failure, with Relacy's report (the failing execution's history) and the executions
// explored.
template <class Scenario>
outcome check(search how, std::optional<mutation> mutant = std::nullopt) {
    static report_buffer buffer; // not on the stack: 64 KiB, and Relacy's fibers are small
    buffer.~report_buffer();
    new (&buffer) report_buffer();
    std::ostream report(&buffer);
    rl::test_params params;
    params.search_type = how.kind;
    params.context_bound = how.context_bound;
    if (how.iterations != 0)
        params.iteration_count = how.iterations;
    params.output_stream = &report;
    params.progress_stream = &report;
    g_mutation = mutant;
    g_mutations_applied = 0;
    const bool passed = rl::simulate<Scenario>(params);
    g_mutation.reset();
    outcome result{passed, static_cast<std::uint64_t>(params.stop_iteration), buffer.text(),
                   g_mutations_applied};
    std::printf("%s: %s after %llu executions\n", mutant ? "mutant" : "model",
                passed ? "no failure" : "failure found",
                static_cast<unsigned long long>(result.explored));
    return result;
}

} // namespace fj::model

// The GoogleTest side of a model test: the scenario passes under `how`, and each mutant fails.
#define FJ_EXPECT_MODEL_PASSES(result)                                                             \
    do {                                                                                           \
        const ::fj::model::outcome fj_model_outcome = (result);                                    \
        EXPECT_TRUE(fj_model_outcome.passed) << fj_model_outcome.report;                           \
    } while (false)
#define FJ_EXPECT_MODEL_REJECTS(result)                                                            \
    do {                                                                                           \
        const ::fj::model::outcome fj_model_outcome = (result);                                    \
        EXPECT_GT(fj_model_outcome.mutations_applied, 0) << "the mutation matched no access";      \
        EXPECT_FALSE(fj_model_outcome.passed) << "the checker accepted the mutant";                \
    } while (false)
