// The Unbalanced Tree Search (UTS) binomial tree, for examples/uts.cpp.
//
// Olivier et al., "UTS: An Unbalanced Tree Search Benchmark", LCPC 2007. The tree is implicit:
// every node carries a 20-byte SHA-1 digest, and its children are derived from it, so any subtree
// can be generated anywhere without the rest of the tree. The reference implementation's rules
// (rng/brg_sha1.c and uts.c of the UTS distribution), which the published counts depend on:
//
//   root state     SHA-1 of 20 bytes: 16 zero bytes, then the seed as 4 big-endian bytes.
//   child i        SHA-1 of 24 bytes: the parent's 20-byte state, then i as 4 big-endian bytes.
//   random number  the state's last 4 bytes (16..19) read big-endian, masked to 31 bits; as a
//                  probability, that number / 2^31.
//   binomial tree  the root (height 0) has floor(b0) children; any other node has m children if
//                  its probability is below q, else none (m is at most 100 there: the reference
//                  caps the children of a non-root node at 100).
//
// The SHA-1 below is written from FIPS 180-1 and checked against its test vectors.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uts {

using digest = std::array<std::uint8_t, 20>;

namespace detail {

inline std::uint32_t load_be32(const std::uint8_t* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

inline void store_be32(std::uint8_t* p, std::uint32_t v) {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}

// One 64-byte block into the five chaining words (FIPS 180-1, section 7).
inline void sha1_block(std::uint32_t h[5], const std::uint8_t* block) {
    std::uint32_t w[80];
    for (int t = 0; t < 16; ++t)
        w[t] = load_be32(block + 4 * t);
#pragma GCC unroll 64
    for (int t = 16; t < 80; ++t)
        w[t] = std::rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    // The 80 rounds in four groups of 20, each with its own function f and constant k. Unrolled:
    // with GCC 12 -O3 that halves the time per block (about 590 -> 270 ns here), and a node of
    // the tree costs one block.
    const auto round = [&](std::uint32_t f, std::uint32_t k, std::uint32_t wt) {
        const std::uint32_t next = std::rotl(a, 5) + f + e + k + wt;
        e = d;
        d = c;
        c = std::rotl(b, 30);
        b = a;
        a = next;
    };
#pragma GCC unroll 20
    for (int t = 0; t < 20; ++t)
        round((b & c) | (~b & d), 0x5A827999, w[t]);
#pragma GCC unroll 20
    for (int t = 20; t < 40; ++t)
        round(b ^ c ^ d, 0x6ED9EBA1, w[t]);
#pragma GCC unroll 20
    for (int t = 40; t < 60; ++t)
        round((b & c) | (b & d) | (c & d), 0x8F1BBCDC, w[t]);
#pragma GCC unroll 20
    for (int t = 60; t < 80; ++t)
        round(b ^ c ^ d, 0xCA62C1D6, w[t]);
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

} // namespace detail

// SHA-1 of `len` bytes: the message, a 1 bit, zeros, and the length in bits as 8 big-endian
// bytes, in 64-byte blocks.
inline digest sha1(const std::uint8_t* data, std::size_t len) {
    std::uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    const std::size_t full_blocks = len / 64;
    for (std::size_t i = 0; i < full_blocks; ++i)
        detail::sha1_block(h, data + 64 * i);
    std::uint8_t tail[128] = {};
    const std::size_t rest = len % 64;
    if (rest != 0)
        std::memcpy(tail, data + 64 * full_blocks, rest);
    tail[rest] = 0x80;
    const std::size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
    const std::uint64_t bits = static_cast<std::uint64_t>(len) * 8;
    for (int i = 0; i < 8; ++i)
        tail[tail_len - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
    detail::sha1_block(h, tail);
    if (tail_len == 128)
        detail::sha1_block(h, tail + 64);
    digest out;
    for (int i = 0; i < 5; ++i)
        detail::store_be32(out.data() + 4 * i, h[i]);
    return out;
}

// The FIPS 180-1 examples (one block, two blocks) and the empty message.
inline bool sha1_self_test() {
    struct vector {
        const char* message;
        digest expected;
    };
    static const vector vectors[] = {
        {"", {0xda, 0x39, 0xa3, 0xee, 0x5e, 0x6b, 0x4b, 0x0d, 0x32, 0x55,
              0xbf, 0xef, 0x95, 0x60, 0x18, 0x90, 0xaf, 0xd8, 0x07, 0x09}},
        {"abc", {0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e,
                 0x25, 0x71, 0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d}},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         {0x84, 0x98, 0x3e, 0x44, 0x1c, 0x3b, 0xd2, 0x6e, 0xba, 0xae,
          0x4a, 0xa1, 0xf9, 0x51, 0x29, 0xe5, 0xe5, 0x46, 0x70, 0xf1}},
    };
    for (const vector& v : vectors) {
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(v.message);
        if (sha1(bytes, std::strlen(v.message)) != v.expected)
            return false;
    }
    return true;
}

// The splittable random number generator (the reference's rng_init, rng_spawn, rng_rand).
inline digest root_state(std::int32_t seed) {
    std::uint8_t message[20] = {};
    detail::store_be32(message + 16, static_cast<std::uint32_t>(seed));
    return sha1(message, sizeof message);
}

inline digest child_state(const digest& parent, std::int32_t index) {
    std::uint8_t message[24];
    std::memcpy(message, parent.data(), 20);
    detail::store_be32(message + 20, static_cast<std::uint32_t>(index));
    return sha1(message, sizeof message);
}

inline std::int32_t random31(const digest& state) {
    return static_cast<std::int32_t>(detail::load_be32(state.data() + 16) & 0x7fffffffu);
}

inline double probability(const digest& state) {
    return random31(state) / 2147483648.0;
}

// A binomial tree's parameters, with the counts to check a traversal against.
struct binomial_tree {
    const char* name;
    double b0;         // children of the root (floor(b0))
    double q;          // probability that a non-root node has children
    int m;             // children of a non-root node that has any
    std::int32_t seed; // root seed
    // The counts: nodes, the greatest height (the root has height 0), nodes without children.
    std::uint64_t nodes;
    int depth;
    std::uint64_t leaves;
    bool published; // the counts are the UTS sample trees' (else recorded from this program)
};

// One node of the implicit tree.
struct node {
    digest state;
    int height;

    int children(const binomial_tree& tree) const {
        if (height == 0)
            return static_cast<int>(tree.b0);
        return probability(state) < tree.q ? tree.m : 0;
    }
    node child(std::int32_t index) const { return {child_state(state, index), height + 1}; }
};

inline node root(const binomial_tree& tree) {
    return {root_state(tree.seed), 0};
}

// What a traversal counts.
struct counts {
    std::uint64_t nodes = 0;
    std::uint64_t leaves = 0; // nodes without children
    int depth = 0;            // the greatest height seen

    friend counts operator+(const counts& a, const counts& b) {
        return {a.nodes + b.nodes, a.leaves + b.leaves, a.depth > b.depth ? a.depth : b.depth};
    }
    friend bool operator==(const counts&, const counts&) = default;
};

} // namespace uts
