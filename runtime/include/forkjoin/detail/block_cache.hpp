// A per-worker cache of fixed-size memory blocks for fork tasks and their future states, so a fork
// does not pay malloc/free. Blocks come from ::operator new and may be freed on any thread: a block
// freed by another worker joins that worker's cache; one freed off the pool, or beyond a cache's
// cap, goes back to ::operator delete. The cap bounds what a producer/consumer imbalance can hoard.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>

namespace fj::detail {

class block_cache {
public:
    static constexpr std::size_t k_class_count = 4; // 64, 128, 256, 512 bytes
    static constexpr std::size_t k_max_cached_per_class = 1024;

    block_cache() = default;
    block_cache(const block_cache&) = delete;
    block_cache& operator=(const block_cache&) = delete;
    ~block_cache() {
        for (std::size_t c = 0; c < k_class_count; ++c) {
            while (free_block* b = m_free[c]) {
                m_free[c] = b->next;
                ::operator delete(b);
            }
        }
    }

    // Returns the size class for `size` bytes, or k_class_count if it is too big to cache.
    static constexpr std::size_t class_of(std::size_t size) noexcept {
        for (std::size_t c = 0; c < k_class_count; ++c)
            if (size <= class_size(c))
                return c;
        return k_class_count;
    }
    static constexpr std::size_t class_size(std::size_t c) noexcept { return std::size_t{64} << c; }

    void* allocate(std::size_t c) {
        if (free_block* b = m_free[c]) {
            m_free[c] = b->next;
            --m_count[c];
            return b;
        }
        return ::operator new(class_size(c));
    }

    void deallocate(void* p, std::size_t c) noexcept {
        if (m_count[c] >= k_max_cached_per_class) {
            ::operator delete(p);
            return;
        }
        m_free[c] = new (p) free_block{m_free[c]};
        ++m_count[c];
    }

private:
    struct free_block {
        free_block* next;
    };
    std::array<free_block*, k_class_count> m_free{};
    std::array<std::uint32_t, k_class_count> m_count{};
};

} // namespace fj::detail
