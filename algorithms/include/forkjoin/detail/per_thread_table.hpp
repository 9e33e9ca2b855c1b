// The storage behind fj::enumerable_thread_specific and fj::combinable: one element per thread
// slot (detail/thread_slot.hpp), created on the slot's first local(), at a stable address, plus a
// list of every element for iteration.
//
// Layout: slot s lives in segment k at offset o, where segment k holds 8 << k slots (8, 16, 32,
// ...), so the table grows without moving anything and a lookup is two loads. Segments are
// created on demand and published with a compare-exchange, so threads that arrive together race
// only on the segment pointer; a slot itself is written only by the thread that holds its number.
//
//   local():  s = this_thread_slot(); seg = segments[k].load(acquire); e = seg[o].load(acquire)
//             -> e is this thread's element (no lock, no read-modify-write);
//             else the slow path creates the element, stores it into the slot (release) and
//             pushes it on the list (release compare-exchange).
//
// Invariant: every non-null slot points at an element on the list, and every element on the list
// is owned by this table until clear() or the destructor.
#pragma once

#include "thread_slot.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include <forkjoin/extension.hpp>

namespace fj::detail {

// The unit of false sharing on the machines this runs on; elements are aligned to it so that two
// threads updating their own elements never write the same line.
inline constexpr std::size_t k_cache_line = 64;

// Makes a T for a thread's first local(): T(), a copy of an exemplar, or a user's function.
template <class T>
class element_maker {
public:
    virtual ~element_maker() = default;
    // A prvalue, so the element is built in place (T need not be movable).
    virtual T make() const = 0;
};

template <class T>
class default_maker final : public element_maker<T> {
public:
    T make() const override { return T(); }
};

template <class T>
class exemplar_maker final : public element_maker<T> {
public:
    explicit exemplar_maker(const T& exemplar) : m_exemplar(exemplar) {}
    explicit exemplar_maker(T&& exemplar) : m_exemplar(std::move(exemplar)) {}
    T make() const override { return m_exemplar; }

private:
    T m_exemplar;
};

template <class T, class F>
class function_maker final : public element_maker<T> {
public:
    explicit function_maker(F fn) : m_fn(std::move(fn)) {}
    // The initializer may be called from several threads at once, as oneTBB's is.
    T make() const override { return m_fn(); }

private:
    F m_fn;
};

// Atomics is the seam (docs/design/models.md): the model test runs this class under Relacy.
template <class T, class Atomics = fj::ext::std_atomics>
class per_thread_table {
    template <class U>
    using atomic = typename Atomics::template atomic<U>;

    // One alignas with the larger value: g++ 12 keeps only the last of several alignas.
    static constexpr std::size_t k_align = alignof(T) > k_cache_line ? alignof(T) : k_cache_line;
    struct alignas(k_align) element {
        explicit element(const element_maker<T>& maker) : value(maker.make()) {}
        T value;
        element* next = nullptr; // older elements; immutable once the element is on the list
    };

public:
    explicit per_thread_table(std::unique_ptr<element_maker<T>> maker) noexcept
        : m_maker(std::move(maker)) {}

    per_thread_table(const per_thread_table&) = delete;
    per_thread_table& operator=(const per_thread_table&) = delete;

    ~per_thread_table() {
        clear();
        for (auto& segment : m_segments)
            delete[] segment.load(std::memory_order_relaxed);
    }

    T& local(bool& exists) { return local_at(this_thread_slot(), exists); }

    // local() for the thread that holds number `slot` (the model test names its threads' numbers).
    T& local_at(std::size_t slot, bool& exists) {
        const auto [k, offset] = locate(slot);
        // acquire: pairs with the release compare-exchange that published the segment.
        if (atomic<element*>* segment = m_segments[k].load(std::memory_order_acquire)) {
            // acquire: pairs with the release store of the element into its slot (this thread's,
            // or a thread that held the same number before and has exited).
            if (element* e = segment[offset].load(std::memory_order_acquire)) {
                exists = true;
                return e->value;
            }
        }
        exists = false;
        return create(k, offset);
    }

    std::size_t size() const noexcept { return m_size.load(std::memory_order_acquire); }

    // Not concurrent with local() or iteration: destroys every element and empties every slot.
    void clear() noexcept {
        element* e = m_head.exchange(nullptr, std::memory_order_acquire);
        while (e != nullptr)
            delete std::exchange(e, e->next);
        for (std::size_t k = 0; k < k_segments; ++k)
            if (atomic<element*>* segment = m_segments[k].load(std::memory_order_relaxed))
                for (std::size_t o = 0; o < segment_size(k); ++o)
                    segment[o].store(nullptr, std::memory_order_relaxed);
        m_size.store(0, std::memory_order_relaxed);
    }

    // A fresh element from the initializer, not stored anywhere (combine() of an empty table).
    T make_detached() const { return m_maker->make(); }

    template <bool Const>
    class basic_iterator {
    public:
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using reference = std::conditional_t<Const, const T&, T&>;
        using pointer = std::conditional_t<Const, const T*, T*>;

        basic_iterator() noexcept = default;
        // iterator -> const_iterator
        basic_iterator(const basic_iterator<!Const>& other) noexcept requires Const
            : m_element(other.m_element) {}

        reference operator*() const noexcept { return m_element->value; }
        pointer operator->() const noexcept { return &m_element->value; }
        basic_iterator& operator++() noexcept {
            m_element = m_element->next;
            return *this;
        }
        basic_iterator operator++(int) noexcept {
            basic_iterator old = *this;
            ++*this;
            return old;
        }
        friend bool operator==(const basic_iterator& a, const basic_iterator& b) noexcept {
            return a.m_element == b.m_element;
        }

    private:
        friend class per_thread_table;
        friend class basic_iterator<true>;
        explicit basic_iterator(element* e) noexcept : m_element(e) {}
        element* m_element = nullptr;
    };

    // acquire: pairs with the release compare-exchange that pushed the newest element, so every
    // element reached from it is fully built.
    basic_iterator<false> begin() noexcept {
        return basic_iterator<false>(m_head.load(std::memory_order_acquire));
    }
    basic_iterator<true> begin() const noexcept {
        return basic_iterator<true>(m_head.load(std::memory_order_acquire));
    }
    basic_iterator<false> end() noexcept { return basic_iterator<false>(nullptr); }
    basic_iterator<true> end() const noexcept { return basic_iterator<true>(nullptr); }

private:
    // 8 << 40 slots: more threads than any machine runs.
    static constexpr std::size_t k_segments = 41;
    static constexpr std::size_t k_first_segment_bits = 3;

    static constexpr std::size_t segment_size(std::size_t k) noexcept {
        return std::size_t{1} << (k + k_first_segment_bits);
    }

    struct location {
        std::size_t segment;
        std::size_t offset;
    };
    // Slot s is number s + 8 counted from 8: its bit width names the segment.
    static location locate(std::size_t slot) noexcept {
        const std::size_t v = slot + (std::size_t{1} << k_first_segment_bits);
        const auto width = static_cast<std::size_t>(std::bit_width(v));
        const std::size_t k = width - 1 - k_first_segment_bits;
        return {k, v - segment_size(k)};
    }

    [[gnu::noinline]] T& create(std::size_t k, std::size_t offset) {
        atomic<element*>* segment = m_segments[k].load(std::memory_order_acquire);
        if (segment == nullptr) {
            // value-initialised: every slot starts null.
            auto fresh = std::make_unique<atomic<element*>[]>(segment_size(k));
            // acq_rel: release publishes the null slots to later readers; acquire, on failure,
            // sees the winner's.
            if (m_segments[k].compare_exchange_strong(
                    segment, fresh.get(), std::memory_order_acq_rel, std::memory_order_acquire))
                segment = fresh.release();
        }
        // Built before anything points at it; an exception from the initializer leaves the slot
        // empty, and the next local() tries again.
        auto* e = new element(*m_maker);
        // release: pairs with the acquire in local() (a later thread holding this number).
        segment[offset].store(e, std::memory_order_release);
        element* head = m_head.load(std::memory_order_relaxed);
        do
            e->next = head;
        // release: pairs with the acquire in begin() and clear(); relaxed on failure, as only
        // the pointer is used again.
        while (!m_head.compare_exchange_weak(head, e, std::memory_order_release,
                                             std::memory_order_relaxed));
        // release: pairs with the acquire in size(), so a size seen covers built elements.
        m_size.fetch_add(1, std::memory_order_release);
        return e->value;
    }

    std::unique_ptr<element_maker<T>> m_maker;
    atomic<atomic<element*>*> m_segments[k_segments] = {};
    atomic<element*> m_head{nullptr};
    atomic<std::size_t> m_size{0};
};

} // namespace fj::detail
