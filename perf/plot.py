#!/usr/bin/env python3
"""Benchmark JSON -> PNG charts for docs/performance.md.

    perf/plot.sh --run        build the perf preset, run `overhead` and `loops` with --json
                              (results in build/perf/results/), then draw the charts
    perf/plot.sh              draw the charts again from the JSON already there

Run through perf/plot.sh, which installs Debian's python3-matplotlib if it is missing and uses
the interpreter that package belongs to.

Charts (into docs/img/ unless --out):
    fib_time.png      fib(n), every call forking: time against workers, one line per runtime
    fib_overhead.png  ns per fork at 1 worker = (T1 - T_serial) / forks
    loops_time.png    the three loop workloads: time against workers, one line per runtime
    tasks.png         tiny tasks submitted from outside the pool: ns per task against workers
    latency.png       submit-to-start latency on an idle pool: median and p99

Every point is the median of the driver's interleaved rounds, with a bar from the fastest to the
slowest round. Each chart's footer gives the date, the load average and the CPU that other
processes used while the part ran (the drivers measure it), so a chart taken on a busy machine
says so. The JSON the charts were drawn from, and the drivers' printed reports, are copied next
to them (<out>/data/).
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib import ticker  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build", "perf")

# Row label -> (legend text, colour, line style). One colour family per runtime: forkjoin blue,
# oneTBB orange, OpenMP green, std::async red, serial black.
STYLE = {
    "serial": ("serial", "black", "--"),
    "fj-seed": ("forkjoin seed style (fork + reschedule_until)", "#1f4e9c", "-"),
    "fj-join": ("forkjoin join", "#4f9be8", "-"),
    "fj-seed+park": ("forkjoin seed style, parking on", "#1f4e9c", ":"),
    "fj-join+park": ("forkjoin join, parking on", "#4f9be8", ":"),
    "tbb": ("oneTBB task_group", "#e07b00", "-"),
    "omp": ("OpenMP tasks (libgomp)", "#2a9d3a", "-"),
    "fj": ("forkjoin", "#1f4e9c", "-"),
    "fj-dropped": ("forkjoin, futures dropped", "#4f9be8", "-"),
    "fj-fnref": ("forkjoin, map as a function reference", "#4f9be8", ":"),
    "tbb-for": ("tbb::parallel_for", "#e07b00", "-"),
    "tbb-reduce": ("tbb::parallel_reduce", "#e07b00", "-"),
    "tbb-det": ("tbb::parallel_deterministic_reduce", "#b35a00", ":"),
    "omp-static": ("OpenMP schedule(static)", "#2a9d3a", "-"),
    "omp-dynamic": ("OpenMP schedule(dynamic)", "#2a9d3a", ":"),
    "std::async": ("std::async (a thread per task)", "#c62828", "--"),
    "tbb-invoke": ("tbb::parallel_invoke", "#e07b00", "-"),
    "omp-task": ("OpenMP task + taskwait", "#2a9d3a", "-"),
}

LOOP_TITLES = {
    "bbp_digits": "BBP hex digits of pi, one position per index",
    "bbp_series": "BBP series (a reduction)",
    "empty_for": "near-empty loop body (the loop machinery itself)",
    "merge_sort": "merge sort of random 32-bit keys (join at every split)",
    "nqueens": "N-queens count, n = board size (join in the first 4 rows)",
}


def style(name, labels=None):
    """(legend text, colour, line style); `labels` overrides the legend text for one chart."""
    label, colour, ls = STYLE.get(name, (name, None, "-"))
    return (labels or {}).get(name, label), colour, ls


def wrap(text, width=20):
    return "\n".join(textwrap.wrap(text, width))


def log_axis(ax):
    """Log scale with plain tick labels (1, 2, 5, 10, 20 ...) instead of 2x10^1."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, cwd=ROOT, **kw)


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


# ---- Running the benchmarks ---------------------------------------------------------------------


def run_benchmarks(args):
    os.makedirs(args.results, exist_ok=True)
    sh(["cmake", "--preset", "perf"], stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", "--preset", "perf", "-j2", "--target", "overhead", "loops"])
    perf = os.path.join(BUILD, "perf")
    programs = args.programs.split(",")
    overhead = [os.path.join(perf, "overhead"), "--n", args.n, "--reps", str(args.reps),
                "--workers", args.workers, "--json", os.path.join(args.results, "overhead.json")]
    loops = [os.path.join(perf, "loops"), "--reps", str(args.reps), "--workers", args.workers,
             "--all-workers", "--json", os.path.join(args.results, "loops.json")]
    if args.quick:  # checks the pipeline in seconds; not for publishing
        overhead += ["--tasks", "20000", "--samples", "50"]
        loops += ["--digits", "500", "--terms", "1e6", "--n", "1e7"]
    info = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.strip(),
        "uptime_before": uptime(),
        "commands": [" ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c
                              for c in cmd) for cmd, name in ((overhead, "overhead"),
                                                              (loops, "loops"))
                     if name in programs],
        "quick": args.quick,
    }
    print("load before the run: " + info["uptime_before"], flush=True)
    for cmd, name in ((overhead, "overhead"), (loops, "loops")):
        if name not in programs:
            continue
        out = sh(cmd, capture_output=True, text=True).stdout
        sys.stdout.write(out)
        with open(os.path.join(args.results, name + ".txt"), "w") as f:
            f.write(out)
    info["uptime_after"] = uptime()
    print("load after the run: " + info["uptime_after"], flush=True)
    # One record per program, so rerunning one of them keeps the other's.
    path = os.path.join(args.results, "run-info.json")
    runs = load(path) if os.path.exists(path) else {}
    for name in programs:
        runs[name] = info
    with open(path, "w") as f:
        json.dump(runs, f, indent=2)


# ---- Drawing ------------------------------------------------------------------------------------


def load(path):
    with open(path) as f:
        return json.load(f)


def footer(fig, info, part, extra=""):
    """Date, load and interference, at the bottom of every chart."""
    wall = part.get("wall_seconds", 0)
    other = part.get("other_cpu_seconds", -1)
    busy = f"other processes used {100 * other / wall:.0f}% of one core meanwhile" \
        if wall > 0 and other >= 0 else "interference not measured"
    text = (f"measured {info['date_utc']} on {info['hardware_threads']} hardware threads; "
            f"load average (1, 5, 15 min) at start {info['load_average_start']}; {busy}"
            f"{'; QUICK RUN, small sizes' if info.get('quick') else ''}{extra}")
    fig.text(0.01, 0.005, text, fontsize=7, color="#555555", ha="left", va="bottom", wrap=True)


def by_name(rows):
    """name -> {workers: row}, in the drivers' order (their registration rank)."""
    out = {}
    for r in rows:
        if r["name"] == "serial-x2":  # the machine's 2-thread ceiling: in the text table only
            continue
        out.setdefault(r["name"], {})[r["workers"]] = r
    return out


def summary(seconds, scale):
    """median, and the distances down to the fastest and up to the slowest round."""
    med = statistics.median(seconds) * scale
    return med, med - min(seconds) * scale, max(seconds) * scale - med


def time_vs_workers(ax, rows, title, scale, unit, workers):
    serial = None
    for name, per_k in by_name(rows).items():
        if 0 in per_k:  # the serial reference (no pool): a horizontal line
            serial = summary(per_k[0]["seconds"], scale)[0]
            continue
        ks = sorted(per_k)
        pts = [summary(per_k[k]["seconds"], scale) for k in ks]
        label, colour, ls = style(name)
        ax.errorbar(ks, [p[0] for p in pts], yerr=[[p[1] for p in pts], [p[2] for p in pts]],
                    label=label, color=colour, linestyle=ls, marker="o", markersize=4, capsize=3)
    if serial is not None:
        ax.axhline(serial, color="black", linestyle="--", linewidth=1,
                   label=f"serial ({serial:,.0f} {unit})" if serial >= 100
                   else f"serial ({serial:.3g} {unit})")
        ax.plot(workers, [serial / k for k in workers], color="grey", linestyle=":",
                linewidth=1, label="serial / workers (perfect scaling)")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("workers (threads)")
    ax.set_ylabel(f"time per run ({unit}, log scale)")
    log_axis(ax)
    ax.set_xticks(workers)
    ax.grid(True, which="both", alpha=0.3)
    # Below the plot: with many runtimes, a legend inside would hide lines.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)


def worker_counts(rows):
    return sorted({r["workers"] for r in rows if r["workers"] > 0})


def fib_charts(over, info, out):
    fib = over["fib"]
    sizes = fib["sizes"]
    cut = f", serial below {fib['cutoff']}" if fib["cutoff"] > 2 else ", every call forks"
    fig, axes = plt.subplots(1, len(sizes), figsize=(6.5 * len(sizes), 6.5), squeeze=False)
    for ax, s in zip(axes[0], sizes):
        time_vs_workers(ax, s["rows"], f"fib({s['n']}){cut}: {s['forks']:,} forks", 1e3, "ms",
                        worker_counts(s["rows"]))
    fig.suptitle(f"fib: time against workers (median of {fib['reps']} interleaved rounds, "
                 "bars: fastest to slowest round)")
    footer(fig, info, fib)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    save(fig, out, "fib_time.png")

    # Overhead per fork at 1 worker: (T1 - T_serial) / forks.
    fig, ax = plt.subplots(figsize=(9, 5))
    names = [n for n in by_name(sizes[0]["rows"]) if n != "serial"]
    width = 0.8 / len(sizes)
    shades = plt.get_cmap("Greys")
    for i, s in enumerate(sizes):
        rows = by_name(s["rows"])
        ts = statistics.median(rows["serial"][0]["seconds"])
        vals = [(statistics.median(rows[n][1]["seconds"]) - ts) * 1e9 / s["forks"]
                if 1 in rows[n] else float("nan") for n in names]
        xs = [j + (i - (len(sizes) - 1) / 2) * width for j in range(len(names))]
        bars = ax.bar(xs, vals, width, label=f"fib({s['n']})",
                      color=shades(0.35 + 0.45 * i / max(1, len(sizes) - 1)), edgecolor="black")
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([wrap(style(n)[0]) for n in names], fontsize=8)
    ax.set_ylabel("ns per fork, 1 worker")
    ax.set_title("Overhead per fork: (T1 − T_serial) / forks, fib with every call forking\n"
                 f"(median of {fib['reps']} interleaved rounds; lower is better)", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    footer(fig, info, fib)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    save(fig, out, "fib_overhead.png")


def loops_chart(loops, info, out):
    ws = loops["workloads"]
    cols = min(3, len(ws))
    rows = (len(ws) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 7 * rows), squeeze=False)
    worst = max(ws, key=lambda w: w.get("other_cpu_seconds", 0) / max(w["wall_seconds"], 1e-9))
    for ax in axes.flat[len(ws):]:
        ax.set_visible(False)
    for ax, w in zip(axes.flat, ws):
        title = f"{w['workload']}, n = {w['size']:,}\n{LOOP_TITLES.get(w['workload'], '')}"
        time_vs_workers(ax, w["rows"], title, 1e3, "ms", worker_counts(w["rows"]))
    fig.suptitle(f"Parallel loops and divide-and-conquer: time against workers (median of "
                 f"{ws[0]['reps']} interleaved rounds, bars: fastest to slowest round)")
    footer(fig, info | {"load_average_start": loops["load_average_start"]}, worst,
           f" (the busiest workload, {worst['workload']})")
    fig.tight_layout(rect=(0, 0.03 / rows, 1, 1 - 0.03 / rows))
    save(fig, out, "loops_time.png")


def tasks_chart(over, info, out):
    tasks = over["tasks"]
    fig, ax = plt.subplots(figsize=(7, 5))
    rows = [dict(r, seconds=r["ns_per_task"]) for r in tasks["rows"]]
    workers = worker_counts(rows)
    for name, per_k in by_name(rows).items():
        label, colour, ls = style(name, {"fj": "forkjoin, futures kept"})
        if 0 in per_k:  # no pool size (std::async): a horizontal line
            med = statistics.median(per_k[0]["seconds"])
            ax.axhline(med, color=colour, linestyle=ls,
                       label=f"{label}: {med:,.0f} ns ({per_k[0]['tasks']:,} tasks)")
            continue
        ks = sorted(per_k)
        pts = [summary(per_k[k]["seconds"], 1) for k in ks]
        ax.errorbar(ks, [p[0] for p in pts], yerr=[[p[1] for p in pts], [p[2] for p in pts]],
                    label=f"{label} ({per_k[ks[0]]['tasks']:,} tasks)", color=colour,
                    linestyle=ls, marker="o", markersize=4, capsize=3)
    log_axis(ax)
    ax.set_xticks(workers)
    ax.set_xlabel("workers (threads)")
    ax.set_ylabel("ns per task, submit to all done (log scale)")
    ax.set_title("Tiny tasks submitted from the main thread, all awaited\n"
                 f"(median of {tasks['reps']} rounds, bars: fastest to slowest round)",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    footer(fig, info, tasks)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save(fig, out, "tasks.png")


def latency_chart(over, info, out):
    lat = over["latency"]
    rows = lat["rows"]
    fig, ax = plt.subplots(figsize=(7, 5))
    names = {"fj": "forkjoin submit", "tbb": "oneTBB arena.enqueue"}
    labels = [wrap(style(r["name"], names)[0], 18) +
              (f"\n{r['workers']} worker{'s' if r['workers'] > 1 else ''}" if r["workers"] else "")
              for r in rows]
    xs = range(len(rows))
    for off, key, what in ((-0.2, "median_ns", "median"), (0.2, "p99_ns", "99th percentile")):
        bars = ax.bar([x + off for x in xs], [r[key] / 1e3 for r in rows], 0.4, label=what,
                      color=[style(r["name"])[1] for r in rows],
                      alpha=1.0 if key == "median_ns" else 0.45)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    log_axis(ax)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("µs from submit to the task's first instruction (log scale)")
    ax.set_title(f"Submit-to-start latency on an idle pool ({lat['samples']} samples, "
                 f"{lat['gap_us']} µs idle before each)\nsolid: median, pale: 99th percentile",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    footer(fig, info, lat)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save(fig, out, "latency.png")


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote " + os.path.relpath(path, ROOT))


def render(args):
    run_info_path = os.path.join(args.results, "run-info.json")
    run_info = load(run_info_path) if os.path.exists(run_info_path) else {}
    os.makedirs(os.path.join(args.out, "data"), exist_ok=True)
    drew = False
    for program in ("overhead", "loops"):
        path = os.path.join(args.results, program + ".json")
        if not os.path.exists(path):
            print(f"no {os.path.relpath(path, ROOT)}: skipping its charts (run with --run)")
            continue
        data = load(path)
        run = run_info.get(program, {})
        date = run.get("date_utc") or datetime.datetime.fromtimestamp(
            os.path.getmtime(path), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        info = {"date_utc": date, "hardware_threads": data["hardware_threads"],
                "load_average_start": data["load_average_start"],
                "quick": run.get("quick", False)}
        if program == "overhead":
            if "fib" in data:
                fib_charts(data, info, args.out)
            if "tasks" in data:
                tasks_chart(data, info, args.out)
            if "latency" in data:
                latency_chart(data, info, args.out)
        else:
            loops_chart(data, info, args.out)
        shutil.copy(path, os.path.join(args.out, "data", program + ".json"))
        table = os.path.join(args.results, program + ".txt")  # the driver's own report
        if os.path.exists(table):
            shutil.copy(table, os.path.join(args.out, "data", program + ".txt"))
        drew = True
    if os.path.exists(run_info_path):
        shutil.copy(run_info_path, os.path.join(args.out, "data", "run-info.json"))
    return drew


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", action="store_true", help="build and run the benchmarks first")
    p.add_argument("--quick", action="store_true",
                   help="with --run: small sizes, to check the pipeline (not for publishing)")
    p.add_argument("--programs", default="overhead,loops",
                   help="with --run: which drivers to run (default overhead,loops)")
    p.add_argument("--n", default="30,35", help="fib sizes for `overhead` (default 30,35)")
    p.add_argument("--reps", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--workers", default="1,2", help="worker counts (default 1,2)")
    p.add_argument("--results", default=os.path.join(BUILD, "results"),
                   help="where the JSON is written and read (default build/perf/results)")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "img"),
                   help="where the PNGs go (default docs/img)")
    args = p.parse_args()
    args.results = os.path.abspath(args.results)
    args.out = os.path.abspath(args.out)
    if args.run:
        run_benchmarks(args)
    if not render(args):
        sys.exit("plot: no benchmark JSON to draw; run perf/plot.sh --run")


if __name__ == "__main__":
    main()
