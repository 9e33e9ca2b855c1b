// fj::grain: an explicit chunk size for the loop algorithms. Without one, parallel_for splits
// adaptively (see parallel_for.hpp) and parallel_reduce picks a grain from the range's size alone.
#pragma once

#include <cstddef>

#include <forkjoin/errors.hpp>

namespace fj {

// Split ranges until every chunk holds at most `size` iterations. Zero is rejected here, so a bad
// grain is reported where it is written.
struct grain {
    explicit grain(std::size_t size) : value(size) {
        if (size == 0)
            detail::throw_invalid_argument("fj::grain: the grain size must be at least 1, not 0");
    }
    std::size_t value;
};

} // namespace fj
