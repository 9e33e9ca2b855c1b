// The atomics a lock-free protocol is written against.
//
// Each protocol class takes its atomics as a template parameter that defaults to std_atomics, so
// the runtime compiles to exactly what std::atomic gives (the same types, the same generated code).
// The model tests (test/model/) instantiate the same classes with Relacy's atomics instead, so the
// model checker explores the production code's interleavings and memory orders, not a copy of it
// (docs/design/models.md).
//
// A policy provides:
//   template <class T> using atomic = ...;        std::atomic's interface, member functions taking
//                                                 std::memory_order
//   static void thread_fence(std::memory_order);  std::atomic_thread_fence
//   static bool asymmetric_barrier_registered();   the asymmetric StoreLoad barrier pair of
//   static bool asymmetric_barrier_available();    asymmetric_barrier.hpp: which formulation a
//   static void light_barrier();                   protocol takes, and its two sides (a model
//   static void heavy_barrier();                   writes each side as the fence it stands for)
//   static void cpu_relax();                       a spin loop's pause and its yield to the
//   static void yield_thread();                    thread it waits for (cpu_relax.hpp; a model
//                                                  yields to its scheduler)
#pragma once

#include "asymmetric_barrier.hpp"
#include "cpu_relax.hpp"

#include <atomic>

namespace fj::detail {

struct std_atomics {
    template <class T>
    using atomic = std::atomic<T>;

    static void thread_fence(std::memory_order order) noexcept { std::atomic_thread_fence(order); }

    static bool asymmetric_barrier_registered() noexcept {
        return detail::asymmetric_barrier_registered();
    }
    static bool asymmetric_barrier_available() noexcept {
        return detail::asymmetric_barrier_available();
    }
    static void light_barrier() noexcept { detail::light_barrier(); }
    static void heavy_barrier() noexcept { detail::heavy_barrier(); }
    static void cpu_relax() noexcept { detail::cpu_relax(); }
    static void yield_thread() noexcept { detail::yield_thread(); }
};

} // namespace fj::detail
