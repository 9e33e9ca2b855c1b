#!/usr/bin/env bash
# What one more parallel_for instantiation costs to compile: a generated file with N distinct
# loop bodies (distinct lambda types, each `out[i] = in[i] * k + i` with its own k) calling
# fj::parallel_for(0, n, body), and the same with oneTBB's tbb::parallel_for, each compiled with
# `g++ -O3 -std=c++20 -c`. Reported per instantiation: (cost at N - cost at 1) / (N - 1), for the
# compile time (the fastest of REPS compiles, so that other load on the machine counts less) and
# for the object's code (`size`'s text column). The header's own cost cancels in the difference.
#   perf/instantiation-cost.sh [N] [REPS]     (default: 33 bodies, 3 compiles each)
# Needs oneTBB's headers (Debian: libtbb-dev) for the comparison; without them only fj is shown.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n_max=${1:-33}
reps=${2:-3}
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() { # $1 fj|tbb, $2 bodies
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
echo "$cxx -O3 -std=c++20 -c, N=$n_max distinct bodies against 1, best of $reps compiles; load: $(uptime | sed 's/.*load average: //')"
printf '%-5s %9s %9s %11s %11s %14s %12s\n' lib "s (N=1)" "s (N=$n_max)" "text (N=1)" "text (N=$n_max)" "s / instance" "bytes / inst"
for lib in "${libs[@]}"; do
    read -r s1 b1 < <(measure "$lib" 1)
    read -r sn bn < <(measure "$lib" "$n_max")
    awk -v l="$lib" -v s1="$s1" -v sn="$sn" -v b1="$b1" -v bn="$bn" -v n="$n_max" 'BEGIN {
        printf "%-5s %9.2f %9.2f %11d %11d %14.3f %12.0f\n", l, s1, sn, b1, bn, (sn - s1) / (n - 1), (bn - b1) / (n - 1)
    }'
done
