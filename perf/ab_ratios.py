#!/usr/bin/env python3
"""Paired ratios for perf/ab-commits.sh: per benchmark row, the median time of each tree and the
median, min and max of the per-round ratios head / base (< 1: head is faster).

    ab_ratios.py RESULTS_DIR ROUNDS BASE_NAME
"""
import json
import statistics
import sys


def rows(path):
    """{(benchmark, row, workers): value} for one driver run (seconds, or ns per task)."""
    with open(path) as f:
        d = json.load(f)
    out = {}
    if d["program"] == "overhead":
        for size in d["fib"]["sizes"]:
            for r in size["rows"]:
                if r["name"].startswith("fj"):
                    out[(f"fib({size['n']})", r["name"], r["workers"])] = r["seconds"][0]
        for r in d["tasks"]["rows"]:
            if r["name"].startswith("fj"):
                out[(f"{r['tasks']} tiny tasks", r["name"], r["workers"])] = r["ns_per_task"][0]
    else:
        for w in d["workloads"]:
            for r in w["rows"]:
                if r["name"] == "fj":
                    out[(w["workload"], r["name"], r["workers"])] = r["seconds"][0]
    return out


def main():
    results, rounds, base_name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    per_key = {}
    for driver in ("overhead", "loops"):
        for r in range(rounds):
            base = rows(f"{results}/{driver}-base-{r}.json")
            head = rows(f"{results}/{driver}-head-{r}.json")
            for key, b in base.items():
                if key in head:
                    per_key.setdefault(key, []).append((b, head[key]))
    print(f"{'benchmark':<20} {'row':<14} {'workers':>7} {base_name[:12]:>12} {'HEAD':>12}"
          f" {'head/base':>10} {'(min-max)':>13}")
    for key in sorted(per_key, key=lambda k: (k[0], k[1], k[2])):
        pairs = per_key[key]
        ratios = [h / b for b, h in pairs]
        unit = 1e3 if "tiny" not in key[0] else 1.0
        print(f"{key[0]:<20} {key[1]:<14} {key[2]:>7} "
              f"{statistics.median(b for b, _ in pairs) * unit:>12.3f} "
              f"{statistics.median(h for _, h in pairs) * unit:>12.3f} "
              f"{statistics.median(ratios):>10.3f} {min(ratios):>6.3f}-{max(ratios):.3f}")
    print("times in ms (tiny tasks: ns per task); ratios per round, median and range;"
          f" {rounds} rounds")


if __name__ == "__main__":
    main()
