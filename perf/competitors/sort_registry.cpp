// Storage for the sort registration table (see sort_competitor.hpp).
#include "competitors/sort_competitor.hpp"

#include <algorithm>
#include <utility>

namespace fj_perf {
namespace {

// A function-local static: safe to use from other translation units' static initialisers.
std::vector<sort_competitor>& sort_table() {
    static std::vector<sort_competitor> table;
    return table;
}

} // namespace

std::vector<sort_competitor> const& sort_competitors() {
    auto& v = sort_table();
    std::stable_sort(v.begin(), v.end(), [](sort_competitor const& a, sort_competitor const& b) {
        return a.rank < b.rank;
    });
    return v;
}

sort_registrar::sort_registrar(sort_competitor c) {
    sort_table().push_back(std::move(c));
}

} // namespace fj_perf
