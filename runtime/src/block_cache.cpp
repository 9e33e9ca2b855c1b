// The central pool behind the per-thread block caches (see block_cache.hpp).
#include "system.hpp"

#include <mutex>
#include <vector>

#include <forkjoin/detail/block_cache.hpp>

namespace fj::detail {
namespace {

struct batch {
    free_block* head;
    std::uint32_t count;
};

class central_pool {
public:
    static constexpr std::size_t k_max_batches = 256; // per class: at most 64 Ki blocks

    central_pool() {
        for (auto& v : m_batches)
            v.reserve(k_max_batches); // so put() never allocates (it runs in noexcept paths)
    }

    bool put(std::size_t c, batch b) noexcept {
        std::lock_guard lock(m_mutex);
        if (m_batches[c].size() >= k_max_batches)
            return false;
        m_batches[c].push_back(b);
        return true;
    }

    bool take(std::size_t c, batch& out) noexcept {
        std::lock_guard lock(m_mutex);
        if (m_batches[c].empty())
            return false;
        out = m_batches[c].back();
        m_batches[c].pop_back();
        return true;
    }

    std::mutex m_mutex; // public for the fork handlers only (lock_central_pool)

private:
    std::array<std::vector<batch>, block_cache::k_class_count> m_batches;
};

// Immortal: workers of a scheduler destroyed during static destruction, and threads exiting
// late, still return blocks here. Reachable through this pointer, so leak checkers stay quiet.
central_pool& central() {
    static central_pool* const pool = new central_pool;
    return *pool;
}

void delete_list(free_block* b) noexcept {
    while (b != nullptr) {
        free_block* next = b->next;
        ::operator delete(b);
        b = next;
    }
}

// Gives the list to the central pool in batches of at most k_batch; frees what does not fit.
void give_back(std::size_t c, free_block* list) noexcept {
    while (list != nullptr) {
        batch b{list, 0};
        free_block* last = list;
        for (b.count = 1; b.count < block_cache::k_batch && last->next != nullptr; ++b.count)
            last = last->next;
        list = last->next;
        last->next = nullptr;
        if (!central().put(c, b))
            delete_list(b.head);
    }
}

thread_local constinit bool tl_outside_cache_gone = false;

struct outside_cache_owner {
    block_cache cache;
    ~outside_cache_owner() { tl_outside_cache_gone = true; } // then `cache` flushes itself
};

} // namespace

bool block_cache::refill(std::size_t c) noexcept {
    batch b{};
    if (!central().take(c, b))
        return false;
    m_free[c] = b.head;
    m_count[c] = b.count;
    return true;
}

void block_cache::spill(std::size_t c) noexcept {
    // Pass on the k_batch newest blocks: just freed, so walking them to cut the list is cheap
    // (one step per free, amortised), and the receiving thread gets them whole.
    batch b{m_free[c], k_batch};
    free_block* last = b.head;
    for (std::uint32_t i = 1; i < k_batch; ++i)
        last = last->next;
    m_free[c] = last->next;
    last->next = nullptr;
    m_count[c] -= k_batch;
    if (!central().put(c, b))
        delete_list(b.head);
}

void block_cache::flush() noexcept {
    for (std::size_t c = 0; c < k_class_count; ++c) {
        give_back(c, m_free[c]);
        m_free[c] = nullptr;
        m_count[c] = 0;
    }
}

block_cache* outside_cache() noexcept {
    if (tl_outside_cache_gone)
        return nullptr;
    thread_local outside_cache_owner owner;
    return &owner.cache;
}

// Held across fork() by the atfork handlers, so the child never inherits it locked by a thread
// that does not exist there.
void lock_central_pool() noexcept {
    central().m_mutex.lock();
}

void unlock_central_pool() noexcept {
    central().m_mutex.unlock();
}

} // namespace fj::detail
