// Storage for the loop registration table (see loop_competitor.hpp).
#include "competitors/loop_competitor.hpp"

#include <algorithm>
#include <utility>

namespace fj_perf {
namespace {

// A function-local static: safe to use from other translation units' static initialisers.
std::vector<loop_competitor>& loop_table() {
    static std::vector<loop_competitor> table;
    return table;
}

} // namespace

std::vector<loop_competitor> const& loop_competitors() {
    auto& v = loop_table();
    std::stable_sort(v.begin(), v.end(), [](loop_competitor const& a, loop_competitor const& b) {
        return a.rank < b.rank;
    });
    return v;
}

loop_registrar::loop_registrar(loop_competitor c) {
    loop_table().push_back(std::move(c));
}

} // namespace fj_perf
