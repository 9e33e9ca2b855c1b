// The central pool behind the per-thread block caches (see block_cache.hpp).
#include "memory/central_pool.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>

#include <forkjoin/detail/block_cache.hpp>

namespace fj::detail {
namespace {

using steady = std::chrono::steady_clock;

// A batch in the central pool. Its header lives in the batch's first block (every block is at
// least 64 bytes and free), so the pool needs no memory of its own and put() never allocates
// (it runs in noexcept paths). `chain` is that block's free_block link: the batch's blocks stay
// one list.
struct batch_node {
    free_block chain;
    batch_node* newer;
    batch_node* older;
    std::uint32_t count;
    steady::time_point pooled_at; // when it entered the pool: what decay measures
};
static_assert(sizeof(batch_node) <= block_cache::class_size(0));

// Per size class, a list of batches: take() hands out the newest (most likely still in a cache
// somewhere), decay releases the oldest.
//
// Retention: the k_resident_batches newest batches of a class stay for good (the old fixed cap:
// the common steady state never touches malloc). Batches beyond them are kept too, so that a
// burst (10^6 submits whose futures are kept) reuses the memory of the previous burst instead of
// going back to malloc and the kernel for fresh pages; each such excess batch is released once it
// has sat unused for k_decay. Releases happen on the next put() and when a worker goes to sleep
// (a sleeping worker with excess pending sleeps with a timeout so an idle program releases it):
// see release_expired() and find_work_or_sleep() (worker_loop.cpp).
class central_pool {
public:
    static constexpr std::size_t k_resident_batches = block_cache::k_central_resident_batches;
    static constexpr std::chrono::seconds k_decay = block_cache::k_decay; // see block_cache.hpp

    void put(std::size_t c, free_block* head, std::uint32_t count) noexcept {
        const steady::time_point now = steady::now();
        free_block* expired = nullptr;
        {
            std::lock_guard lock(m_mutex);
            auto* node = ::new (static_cast<void*>(head))
                batch_node{free_block{head->next}, nullptr, nullptr, count, now};
            class_list& list = m_lists[c];
            node->older = list.newest;
            if (list.newest != nullptr)
                list.newest->newer = node;
            else
                list.oldest = node;
            list.newest = node;
            ++list.batches;
            unlink_expired(c, now, expired);
            publish_excess();
        }
        delete_batches(expired);
    }

    bool take(std::size_t c, free_block*& head, std::uint32_t& count) noexcept {
        std::lock_guard lock(m_mutex);
        class_list& list = m_lists[c];
        batch_node* node = list.newest;
        if (node == nullptr)
            return false;
        list.newest = node->older;
        if (list.newest != nullptr)
            list.newest->newer = nullptr;
        else
            list.oldest = nullptr;
        --list.batches;
        publish_excess();
        count = node->count;
        head = ::new (static_cast<void*>(node)) free_block{node->chain.next};
        return true;
    }

    // Releases the excess batches that have been unused for k_decay (all excess if `all`).
    void release_expired(bool all) noexcept {
        free_block* expired = nullptr;
        {
            std::lock_guard lock(m_mutex);
            const steady::time_point cutoff = all ? steady::time_point::max() : steady::now();
            for (std::size_t c = 0; c < block_cache::k_class_count; ++c)
                unlink_expired(c, cutoff, expired);
            publish_excess();
        }
        delete_batches(expired);
    }

    bool has_excess() const noexcept { return m_excess.load(std::memory_order_relaxed) != 0; }

    std::size_t pooled_blocks(std::size_t c) {
        std::lock_guard lock(m_mutex);
        std::size_t n = 0;
        for (batch_node* b = m_lists[c].newest; b != nullptr; b = b->older)
            n += b->count;
        return n;
    }

    std::mutex m_mutex; // public for the fork handlers only (lock_central_pool)

private:
    struct class_list {
        batch_node* newest = nullptr;
        batch_node* oldest = nullptr;
        std::size_t batches = 0;
    };

    // Under m_mutex. Unlinks the excess batches of class c pooled at or before `now - k_decay`
    // (every excess batch when now is time_point::max()) and prepends them to `released`, a list
    // of batch nodes linked through `older`.
    void unlink_expired(std::size_t c, steady::time_point now, free_block*& released) noexcept {
        class_list& list = m_lists[c];
        while (list.batches > k_resident_batches &&
               (now == steady::time_point::max() || list.oldest->pooled_at + k_decay <= now)) {
            batch_node* node = list.oldest;
            list.oldest = node->newer;
            list.oldest->older = nullptr; // batches > resident >= 1 remain: never null
            --list.batches;
            node->older = reinterpret_cast<batch_node*>(released);
            released = reinterpret_cast<free_block*>(node);
        }
    }

    // Outside m_mutex: frees every block of every batch in the list.
    static void delete_batches(free_block* batches) noexcept {
        auto* node = reinterpret_cast<batch_node*>(batches);
        while (node != nullptr) {
            batch_node* next_batch = node->older;
            free_block* b = node->chain.next;
            node->~batch_node();
            ::operator delete(static_cast<void*>(node));
            while (b != nullptr) {
                free_block* next = b->next;
                ::operator delete(b);
                b = next;
            }
            node = next_batch;
        }
    }

    void publish_excess() noexcept { // under m_mutex
        std::size_t excess = 0;
        for (const class_list& list : m_lists)
            excess += list.batches > k_resident_batches ? list.batches - k_resident_batches : 0;
        // relaxed: a hint for sleeping workers (whether to sleep with a timeout); a stale value
        // costs one needless timed wake-up or one sleep that releases later.
        m_excess.store(excess, std::memory_order_relaxed);
    }

    std::array<class_list, block_cache::k_class_count> m_lists{};
    std::atomic<std::size_t> m_excess{0};
};

// Immortal: workers of a scheduler destroyed during static destruction, and threads exiting
// late, still return blocks here. Reachable through this pointer, so leak checkers stay quiet.
central_pool& central() {
    static central_pool* const pool = new central_pool;
    return *pool;
}

// Gives the list to the central pool in batches of at most k_batch.
void give_back(std::size_t c, free_block* list) noexcept {
    while (list != nullptr) {
        free_block* head = list;
        free_block* last = list;
        std::uint32_t count = 1;
        for (; count < block_cache::k_batch && last->next != nullptr; ++count)
            last = last->next;
        list = last->next;
        last->next = nullptr;
        central().put(c, head, count);
    }
}

} // namespace

void release_idle_blocks(bool all) noexcept {
    central().release_expired(all);
}

bool idle_blocks_pending() noexcept {
    return central().has_excess();
}

std::size_t central_pool_blocks(std::size_t c) {
    return central().pooled_blocks(c);
}

namespace {
thread_local constinit bool tl_outside_cache_gone = false;

struct outside_cache_owner {
    block_cache cache;
    ~outside_cache_owner() { tl_outside_cache_gone = true; } // then `cache` flushes itself
};

} // namespace

bool block_cache::refill(std::size_t c) noexcept {
    free_block* head = nullptr;
    std::uint32_t count = 0;
    if (!central().take(c, head, count))
        return false;
    m_free[c] = head;
    m_count[c] = count;
    return true;
}

void block_cache::spill(std::size_t c) noexcept {
    // Pass on the k_batch newest blocks: just freed, so walking them to cut the list is cheap
    // (one step per free, amortised), and the receiving thread gets them whole.
    free_block* head = m_free[c];
    free_block* last = head;
    for (std::uint32_t i = 1; i < k_batch; ++i)
        last = last->next;
    m_free[c] = last->next;
    last->next = nullptr;
    m_count[c] -= k_batch;
    central().put(c, head, k_batch);
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
