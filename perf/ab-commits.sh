#!/usr/bin/env bash
# This tree against another commit, in paired rounds: fib(N) (fj seed and join styles, at 1 and 2
# workers), 10^6 tiny tasks submitted from outside, and the BBP digits loop. Each round runs the
# base binary and this tree's back to back, in an order that alternates between rounds, so a slow
# phase of a shared machine hits both halves of a pair alike; the estimate is the median of the
# per-round ratios head / base (< 1: this tree is faster), with their range.
#   perf/ab-commits.sh [BASE_COMMIT] [ROUNDS] [N]      (defaults: HEAD~1, 11, 35)
# Builds the perf drivers of both trees in Release under build/ab/ (oneTBB and OpenMP as the perf
# preset finds them). Prints the load average before and after.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
base=${1:-HEAD~1}
rounds=${2:-11}
fib_n=${3:-35}
out=build/ab
rm -rf "$out/results"
mkdir -p "$out/results"
rm -rf "$out/base-src"
git worktree add --force --detach "$out/base-src" "$base" >/dev/null
trap 'git worktree remove --force "$out/base-src" >/dev/null 2>&1 || true' EXIT

build() { # $1 source tree, $2 name
    cmake -S "$1" -B "$out/$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFJ_BUILD_TESTS=OFF \
        -DFJ_BUILD_EXAMPLES=OFF -DFJ_BUILD_PERF=ON -DFJ_TEST_INSTALL=OFF >/dev/null
    cmake --build "$out/$2" -j2 --target overhead loops >/dev/null
}
build "$out/base-src" base
build . head

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # $1 name, $2 round
    "$out/$1/perf/overhead" --n "$fib_n" --reps 1 --workers 1,2 --only fib,tasks \
        --json "$out/results/overhead-$1-$2.json" >/dev/null
    "$out/$1/perf/loops" --only bbp_digits --reps 1 --workers 1,2 \
        --json "$out/results/loops-$1-$2.json" >/dev/null
}
for ((r = 0; r < rounds; ++r)); do
    if ((r % 2 == 0)); then run base "$r"; run head "$r"; else run head "$r"; run base "$r"; fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 perf/ab_ratios.py "$out/results" "$rounds" "$base"
