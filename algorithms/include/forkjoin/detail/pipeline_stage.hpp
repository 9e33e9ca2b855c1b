// The pieces a pipeline is made of: the token that carries one item through the stages, and a
// stage with its callable behind a virtual call, so that fj::filter<In, Out> does not carry the
// types of the stages inside it.
//
// A token is allocated once with room for the largest item type of the chain and reused: each
// stage moves its input out of the token's storage, destroys it, and constructs its output in the
// same storage. The token's destructor destroys whatever item it still holds, so a token dropped
// anywhere (a skipped task, a stage buffer cleared at the end, an exception) leaks nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include <forkjoin/extension.hpp>

namespace fj {

namespace detail {
struct flow_access;
}

enum class filter_mode { parallel, serial_in_order, serial_out_of_order };

// Passed to the input stage; stop() says "no more items". The value the input returns from that
// same call is ignored, as in oneTBB.
class flow_control {
public:
    void stop() noexcept { m_stopped = true; }

private:
    friend struct detail::flow_access;
    bool m_stopped = false;
};

namespace detail {

struct flow_access {
    static bool stopped(const flow_control& fc) noexcept { return fc.m_stopped; }
};

// Room for an item: the largest size and alignment over the chain's item types.
struct item_layout {
    std::size_t size = 0;
    std::size_t align = alignof(std::max_align_t);
};

class pipeline_token {
public:
    // Owned by a task closure, a stage buffer or the free list; see docs/design/pipeline.md.
    std::size_t seq = 0;            // the input order, from 0: what serial_in_order stages follow
    std::size_t stage = 0;          // the next stage to run; 0 means "fetch an item"
    bool holds_stage = false;       // set when a release handed this token its serial stage
    pipeline_token* next = nullptr; // the free list's link

    static pipeline_token* make(const item_layout& layout) {
        const std::size_t align =
            layout.align < alignof(pipeline_token) ? alignof(pipeline_token) : layout.align;
        const std::size_t offset = (sizeof(pipeline_token) + align - 1) / align * align;
        void* memory = ::operator new (offset + layout.size, std::align_val_t{align});
        auto* t = ::new (memory) pipeline_token(align);
        t->m_item = static_cast<unsigned char*>(memory) + offset;
        return t;
    }

    static void destroy(pipeline_token* t) noexcept {
        const std::align_val_t align = t->m_align;
        t->~pipeline_token();
        ::operator delete(static_cast<void*>(t), align);
    }

    pipeline_token(const pipeline_token&) = delete;
    pipeline_token& operator=(const pipeline_token&) = delete;

    // Moves the item of type T out and leaves the storage empty.
    template <class T>
    T take() {
        T* p = std::launder(static_cast<T*>(m_item));
        T value(std::move(*p));
        clear();
        return value;
    }

    // Constructs the item of type T from make()'s result, in place: a make() that returns a T
    // by value is elided into the storage, so no item is moved on the way out of a stage.
    template <class T, class Make>
    void emplace(Make&& make) {
        ::new (m_item) T(std::forward<Make>(make)());
        m_destroy = [](void* p) noexcept { std::launder(static_cast<T*>(p))->~T(); };
    }

    void clear() noexcept {
        if (m_destroy != nullptr)
            std::exchange(m_destroy, nullptr)(m_item);
    }

private:
    explicit pipeline_token(std::size_t align) noexcept : m_align(std::align_val_t{align}) {}
    ~pipeline_token() { clear(); }

    void* m_item = nullptr;
    void (*m_destroy)(void*) noexcept = nullptr; // set while the storage holds an item
    std::align_val_t m_align;
};

struct token_deleter {
    void operator()(pipeline_token* t) const noexcept { pipeline_token::destroy(t); }
};
using token_ptr = std::unique_ptr<pipeline_token, token_deleter>;

class pipeline_stage {
public:
    pipeline_stage(filter_mode mode, std::size_t out_size, std::size_t out_align) noexcept
        : m_mode(mode), m_out_size(out_size), m_out_align(out_align) {}
    virtual ~pipeline_stage() = default;
    pipeline_stage(const pipeline_stage&) = delete;
    pipeline_stage& operator=(const pipeline_stage&) = delete;

    // Turns the token's item into the next one (the input stage: makes one, or stops fc).
    virtual void run(pipeline_token& t, flow_control& fc) = 0;

    filter_mode mode() const noexcept { return m_mode; }
    std::size_t out_size() const noexcept { return m_out_size; }
    std::size_t out_align() const noexcept { return m_out_align; }

private:
    filter_mode m_mode;
    std::size_t m_out_size;
    std::size_t m_out_align;
};

template <class T>
inline constexpr std::size_t
    size_or_zero = std::is_void_v<T> ? 0 : sizeof(std::conditional_t<std::is_void_v<T>, char, T>);
template <class T>
inline constexpr std::size_t
    align_or_one = std::is_void_v<T> ? 1 : alignof(std::conditional_t<std::is_void_v<T>, char, T>);

// What a stage's callable must accept: flow_control& for the input stage (In = void), an rvalue
// In otherwise; and return something Out can be made from (anything, when Out is void).
template <class In, class Out, class F>
consteval bool stage_callable() {
    if constexpr (std::is_void_v<In>) {
        if constexpr (!std::is_invocable_v<F&, flow_control&>)
            return false;
        else if constexpr (std::is_void_v<Out>)
            return true;
        else
            return std::is_constructible_v<Out, std::invoke_result_t<F&, flow_control&>>;
    } else {
        if constexpr (!std::is_invocable_v<F&, In&&>)
            return false;
        else if constexpr (std::is_void_v<Out>)
            return true;
        else
            return std::is_constructible_v<Out, std::invoke_result_t<F&, In&&>>;
    }
}

template <class In, class Out, class F>
class stage_of final : public pipeline_stage {
public:
    template <class G>
    stage_of(filter_mode mode, G&& fn)
        : pipeline_stage(mode, size_or_zero<Out>, align_or_one<Out>), m_fn(std::forward<G>(fn)) {}

    void run(pipeline_token& t, flow_control& fc) override {
        if constexpr (std::is_void_v<In>) {
            if constexpr (std::is_void_v<Out>) {
                ext::invoke(m_fn, fc);
            } else {
                t.emplace<Out>([&]() -> decltype(auto) { return ext::invoke(m_fn, fc); });
                if (flow_access::stopped(fc))
                    t.clear(); // the value returned with stop() is not an item
            }
        } else {
            In in = t.template take<In>(); // the token is empty while the callable runs
            if constexpr (std::is_void_v<Out>)
                ext::invoke(m_fn, std::move(in));
            else
                t.emplace<Out>(
                    [&]() -> decltype(auto) { return ext::invoke(m_fn, std::move(in)); });
        }
    }

private:
    F m_fn; // parallel stages call it concurrently, as oneTBB does
};

} // namespace detail
} // namespace fj
