#!/usr/bin/env bash
# Instructions per fork, this tree against another commit, counted by callgrind (exact and
# repeatable on a loaded machine, unlike time): fib(22) minus fib(18) on a 1-worker pool, divided
# by the difference in forks (28,656 - 4,180).
#   perf/instructions-per-fork.sh [BASE_COMMIT]    (default: 68083a7, before trace and profiler)
# Needs valgrind. Builds the runtime library of both trees in Release under build/ipf/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
base=${1:-68083a7}
out=build/ipf
mkdir -p "$out"
rm -rf "$out/base-src"
git worktree add --force --detach "$out/base-src" "$base" >/dev/null
trap 'git worktree remove --force "$out/base-src" >/dev/null 2>&1 || true' EXIT

build() { # $1 source tree, $2 name
    rm -rf "${out:?}/$2" # a fresh tree: the library's file name changed between commits
    cmake -S "$1" -B "$out/$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFJ_BUILD_TESTS=OFF \
        -DFJ_BUILD_EXAMPLES=OFF -DFJ_BUILD_PERF=OFF -DFJ_TEST_INSTALL=OFF >/dev/null
    cmake --build "$out/$2" -j2 --target forkjoin_runtime >/dev/null
    g++ -std=c++20 -O2 -DNDEBUG -I"$1/runtime/include" perf/fork_probe.cpp \
        "$out/$2"/runtime/libforkjoin*.a -lboost_thread -lboost_context -pthread \
        -o "$out/probe-$2"
}
build "$out/base-src" base
build . head

count() { # $1 probe, $2 mode, $3 n
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 2>&1 |
        awk '/Collected/ {print $4}'
}
printf '%-8s %10s %10s\n' "per fork" "$base" "HEAD"
for mode in join future; do
    row=()
    for v in base head; do
        big=$(count "$out/probe-$v" "$mode" 22)
        small=$(count "$out/probe-$v" "$mode" 18)
        row+=("$(awk -v a="$big" -v b="$small" 'BEGIN {printf "%.1f", (a - b) / (28656 - 4180)}')")
    done
    printf '%-8s %10s %10s\n' "$mode" "${row[@]}"
done
