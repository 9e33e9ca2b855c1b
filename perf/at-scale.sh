#!/usr/bin/env bash
# The at-scale counts (docs/performance.md#at-scale): for each N, scale_probe's workloads on a
# pool of N workers in a process that sees N CPUs (the fj_fake_cpus preload), counted by
# `perf stat` during the workload only: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) calls,
# futex wake calls (FUTEX_WAKE_PRIVATE) and all futex calls; and the pool's own counters
# (sleeps, wake-ups, steals, failed steal probes, and of those the ones in looks that then stole).
# Counts, not times; each the median of RUNS
# runs (default 3: the counts of one run vary with the machine's load).
#   [RUNS=3] perf/at-scale.sh BUILD_DIR [N...]   (default N: 2 8 32 64; BUILD_DIR: FJ_BUILD_PERF=ON)
# Needs perf with access to the syscalls tracepoints (perf_event_paranoid <= 2 as root).
set -euo pipefail
build=${1:?usage: perf/at-scale.sh BUILD_DIR [N...]}
shift
counts=("$@")
runs=${RUNS:-3}
[ ${#counts[@]} -eq 0 ] && counts=(2 8 32 64)
probe=$build/perf/scale_probe
shim=$build/perf/libfj_fake_cpus.so
[ -x "$probe" ] && [ -f "$shim" ] || {
    echo "build scale_probe and fj_fake_cpus in $build first" >&2
    exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkfifo "$work/ctl" "$work/ack"

printf '| workload | N | membarrier | futex wake | futex | sleeps | wake-ups | steals | failed probes | probes per steal | probes per stealing look |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
# One run: membarrier, futex wake, futex, sleeps, wake-ups, steals, failed probes, failed probes
# before a steal.
run_once() { # $1 workload, $2 N
    FJ_FAKE_CPUS=$2 LD_PRELOAD=$shim FJ_PERF_CTL=$work/ctl FJ_PERF_ACK=$work/ack \
        perf stat -x, -o "$work/perf.csv" --delay -1 --control "fifo:$work/ctl,$work/ack" \
        -e syscalls:sys_enter_membarrier --filter 'cmd == 8' \
        -e syscalls:sys_enter_futex --filter 'op == 129' \
        -e syscalls:sys_enter_futex \
        "$probe" "$1" >"$work/probe.txt" 2>"$work/stderr.txt" || {
        cat "$work/stderr.txt" >&2
        exit 1
    }
    local line
    line=$(cat "$work/probe.txt")
    field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$line"; }
    [ "$(field workers)" = "$2" ] || {
        echo "scale_probe ran $(field workers) workers, not $2: is the preload working?" >&2
        exit 1
    }
    echo $(grep syscalls "$work/perf.csv" | cut -d, -f1) "$(field sleeps)" "$(field wakeups)" \
        "$(field steals)" "$(field failed_steals)" "$(field failed_before_steal)"
}

for workload in regions joins fib submit; do
    for n in "${counts[@]}"; do
        for ((r = 0; r < runs; ++r)); do
            run_once "$workload" "$n"
        done >"$work/runs.txt"
        # The median of each column; the probes per steal from the medians.
        medians=()
        for col in 1 2 3 4 5 6 7 8; do
            medians+=("$(cut -d' ' -f$col "$work/runs.txt" | sort -n |
                awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')")
        done
        per_steal=$(awk -v s="${medians[5]}" -v f="${medians[6]}" \
            'BEGIN { if (s > 0) printf "%.1f", (s + f) / s; else print "-" }')
        per_look=$(awk -v s="${medians[5]}" -v f="${medians[7]}" \
            'BEGIN { if (s > 0) printf "%.2f", (s + f) / s; else print "-" }')
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$workload" "$n" \
            "${medians[@]:0:7}" "$per_steal" "$per_look"
    done
done
