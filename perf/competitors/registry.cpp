// Storage for the registration table (see competitor.hpp).
#include "competitors/competitor.hpp"

#include <algorithm>

namespace fj_perf {
namespace {

// Function-local statics: safe to use from other translation units' static initialisers.
std::vector<fib_competitor>& fib_table() {
    static std::vector<fib_competitor> table;
    return table;
}
std::vector<task_competitor>& task_table() {
    static std::vector<task_competitor> table;
    return table;
}

template <class T>
std::vector<T> const& sorted(std::vector<T>& v) {
    std::stable_sort(v.begin(), v.end(), [](T const& a, T const& b) { return a.rank < b.rank; });
    return v;
}

} // namespace

std::vector<fib_competitor> const& fib_competitors() {
    return sorted(fib_table());
}
std::vector<task_competitor> const& task_competitors() {
    return sorted(task_table());
}

registrar::registrar(fib_competitor c) {
    fib_table().push_back(std::move(c));
}
registrar::registrar(task_competitor c) {
    task_table().push_back(std::move(c));
}

} // namespace fj_perf
