// fj::feeder<Item>: how a parallel_for_each body adds work while the loop runs (oneTBB's
// tbb::feeder). A body taking (item, fj::feeder<Item>&) may call add() any number of times; each
// added item is processed by the same body, possibly in parallel, before parallel_for_each
// returns.
#pragma once

#include <utility>

namespace fj {

template <class Item>
class feeder {
public:
    feeder(const feeder&) = delete;
    feeder& operator=(const feeder&) = delete;

    void add(const Item& item) { m_add(m_context, Item(item)); }
    void add(Item&& item) { m_add(m_context, std::move(item)); }

protected:
    using add_fn = void (*)(void* context, Item&& item);
    feeder(void* context, add_fn adder) noexcept : m_context(context), m_add(adder) {}
    ~feeder() = default;

private:
    void* m_context;
    add_fn m_add;
};

} // namespace fj
