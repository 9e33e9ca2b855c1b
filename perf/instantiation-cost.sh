#!/usr/bin/env bash
# What one more parallel_for (or parallel_reduce) instantiation costs to compile: a generated file
# with N distinct loop bodies (distinct lambda types, each `out[i] = in[i] * k + i` with its own k)
# calling fj::parallel_for(0, n, body), and the same with oneTBB's tbb::parallel_for, each compiled
# with `g++ -O3 -std=c++20 -c`. With `reduce`, each body is a sum of `in[i] * k + i`:
# fj::parallel_reduce(0, n, 0.0, map, plus) against tbb::parallel_reduce over a blocked_range with
# a chunk lambda and std::plus. Reported per instantiation: (cost at N - cost at 1) / (N - 1), for the
# compile time (the fastest of REPS compiles, so that other load on the machine counts less) and
# for the object's code (`size`'s text column). The header's own cost cancels in the difference.
#   perf/instantiation-cost.sh [N] [REPS] [for|reduce]   (default: 33 bodies, 3 compiles, for)
# Needs oneTBB's headers (Debian: libtbb-dev) for the comparison; without them only fj is shown.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n_max=${1:-33}
reps=${2:-3}
algorithm=${3:-for}
if [[ $algorithm != for && $algorithm != reduce ]]; then
    echo "usage: $0 [N] [REPS] [for|reduce]" >&2
    exit 2
fi
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() { # $1 fj|tbb, $2 bodies
    if [[ $algorithm == reduce ]]; then
        generate_reduce "$@"
        return
    fi
    if [[ $1 == fj ]]; then
        echo '#include <forkjoin/parallel_for.hpp>'
    else
        echo '#include <oneapi/tbb/parallel_for.h>'
    fi
    echo '#include <cstddef>'
    for ((k = 0; k < $2; ++k)); do
        echo "void loop_$k(const double* in, double* out, std::size_t n) {"
        if [[ $1 == fj ]]; then
            echo "    fj::parallel_for(std::size_t{0}, n, [=](std::size_t i) { out[i] = in[i] * $k.5 + double(i); });"
        else
            echo "    tbb::parallel_for(std::size_t{0}, n, [=](std::size_t i) { out[i] = in[i] * $k.5 + double(i); });"
        fi
        echo "}"
    done
}

generate_reduce() { # $1 fj|tbb, $2 bodies
    if [[ $1 == fj ]]; then
        echo '#include <forkjoin/parallel_reduce.hpp>'
    else
        echo '#include <oneapi/tbb/blocked_range.h>'
        echo '#include <oneapi/tbb/parallel_reduce.h>'
        echo '#include <functional>'
    fi
    echo '#include <cstddef>'
    for ((k = 0; k < $2; ++k)); do
        echo "double sum_$k(const double* in, std::size_t n) {"
        if [[ $1 == fj ]]; then
            echo "    return fj::parallel_reduce(std::size_t{0}, n, 0.0, [=](std::size_t i) { return in[i] * $k.5 + double(i); }, [](double a, double b) { return a + b; });"
        else
            echo "    return tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, n), 0.0, [=](const tbb::blocked_range<std::size_t>& r, double acc) { for (std::size_t i = r.begin(); i != r.end(); ++i) acc += in[i] * $k.5 + double(i); return acc; }, std::plus<double>());"
        fi
        echo "}"
    done
}

measure() { # $1 fj|tbb, $2 bodies: prints "seconds text_bytes"
    local src="$work/$1-$2.cpp" obj="$work/$1-$2.o" best="" t0 t1 s
    generate "$1" "$2" >"$src"
    for ((r = 0; r < reps; ++r)); do
        t0=$(date +%s.%N)
        "$cxx" -O3 -std=c++20 -c "$src" -o "$obj" -I runtime/include -I algorithms/include
        t1=$(date +%s.%N)
        s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
        if [[ -z $best ]] || awk -v a="$s" -v b="$best" 'BEGIN {exit !(a < b)}'; then best=$s; fi
    done
    echo "$best $(size "$obj" | awk 'NR == 2 {print $1}')"
}

libs=(fj)
if [[ -e /usr/include/oneapi/tbb/parallel_for.h ]]; then libs+=(tbb); fi
echo "parallel_$algorithm, $cxx -O3 -std=c++20 -c, N=$n_max distinct bodies against 1, best of $reps compiles; load: $(uptime | sed 's/.*load average: //')"
printf '%-5s %9s %9s %11s %11s %14s %12s\n' lib "s (N=1)" "s (N=$n_max)" "text (N=1)" "text (N=$n_max)" "s / instance" "bytes / inst"
for lib in "${libs[@]}"; do
    read -r s1 b1 < <(measure "$lib" 1)
    read -r sn bn < <(measure "$lib" "$n_max")
    awk -v l="$lib" -v s1="$s1" -v sn="$sn" -v b1="$b1" -v bn="$bn" -v n="$n_max" 'BEGIN {
        printf "%-5s %9.2f %9.2f %11d %11d %14.3f %12.0f\n", l, s1, sn, b1, bn, (sn - s1) / (n - 1), (bn - b1) / (n - 1)
    }'
done
