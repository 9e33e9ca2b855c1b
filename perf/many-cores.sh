#!/usr/bin/env bash
# Timings and counts on a machine with many cores and nothing installed but the binaries (no perf,
# no compiler): the machine's description; scale_probe's counts at each N with the
# fj_count_syscalls preload (membarrier calls, exact; the process's voluntary context switches,
# which stand for futex waits), with the asymmetric barrier and with FJ_SYMMETRIC_BARRIER=1; then
# confined_bench and overhead (fib, tiny tasks, submit-to-start latency) at 1..N workers against
# oneTBB with both barriers, and loops (against oneTBB and OpenMP) and caller_bench with the
# default one. Each part has a time limit, so a slow part cannot starve the rest.
#   perf/many-cores.sh BIN_DIR [OUT_DIR]
#     BIN_DIR: scale_probe, confined_bench, overhead, loops, caller_bench and
#              libfj_count_syscalls.so of a Release build with FJ_BUILD_PERF=ON
#     WORKERS="1 2 4 8 16" (default: powers of two up to the CPUs), RUNS=3 (counts per cell)
# Results: OUT_DIR/{machine-and-counts,confined,overhead,loops-and-callers}.txt and stdout.
set -uo pipefail
bin=$(cd "${1:?usage: perf/many-cores.sh BIN_DIR [OUT_DIR]}" && pwd)
out=${2:-.}
mkdir -p "$out"
cpus=$(nproc)
if [ -z "${WORKERS:-}" ]; then
    WORKERS=""
    for ((n = 1; n <= cpus; n *= 2)); do WORKERS="$WORKERS $n"; done
fi
read -r -a workers <<<"$WORKERS"
list=$(IFS=,; echo "${workers[*]}")
runs=${RUNS:-3}

section() { # $1 title: a header with the time and the load
    printf '\n## %s (%s UTC, load %s)\n' "$1" "$(date -u +%H:%M:%S)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

{
    section machine
    uname -srm
    echo "cpus in the affinity mask: $cpus"
    lscpu 2>/dev/null | grep -E '^(Model name|Socket|Core|Thread|NUMA node\(s\)|CPU max MHz|L2|L3)' || true
    grep -m1 'model name' /proc/cpuinfo || true
    free -m | head -2
    section "counts: scale_probe at N workers, one line per run"
    for n in "${workers[@]}"; do
        [ "$n" -ge 2 ] || continue
        for workload in regions joins fib submit; do
            for barrier in asymmetric symmetric; do
                for ((r = 0; r < runs; ++r)); do
                    symmetric=0
                    [ $barrier = symmetric ] && symmetric=1
                    printf 'barrier=%s ' $barrier
                    FJ_SYMMETRIC_BARRIER=$symmetric LD_PRELOAD="$bin/libfj_count_syscalls.so" \
                        timeout 30 "$bin/scale_probe" "$workload" --workers "$n" || echo "failed: $?"
                done
            done
        done
    done
} 2>&1 | tee "$out/machine-and-counts.txt"

{
    for symmetric in 0 1; do
        section "confined_bench, FJ_SYMMETRIC_BARRIER=$symmetric"
        FJ_SYMMETRIC_BARRIER=$symmetric timeout 60 "$bin/confined_bench" --rounds 5 --workers "$list"
    done
} 2>&1 | tee "$out/confined.txt"

{
    for symmetric in 0 1; do
        section "overhead, FJ_SYMMETRIC_BARRIER=$symmetric"
        FJ_SYMMETRIC_BARRIER=$symmetric timeout 90 "$bin/overhead" --n 30 --reps 5 --workers "$list" \
            --tasks 200000 --samples 200
    done
} 2>&1 | tee "$out/overhead.txt"

{
    section loops
    timeout 120 "$bin/loops" --reps 3 --workers "$list" --all-workers --digits 2000 --terms 2e7 \
        --n 5e7 --sort-n 4e6 --queens 13
    section "caller_bench"
    timeout 60 "$bin/caller_bench" --rounds 5 --workers "$list" --calls 5000 --iterations 300
} 2>&1 | tee "$out/loops-and-callers.txt"
