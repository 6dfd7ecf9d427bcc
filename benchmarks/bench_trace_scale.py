"""Benchmark: time and memory of generating and replaying traces of 1,000-100,000 jobs (#15, 3).

Usage: python benchmarks/bench_trace_scale.py [--sizes 1000 3000 10000 30000 100000]
           [--kind simulation] [--rate-scale 25] [--in-memory-up-to 10000]
           [--out benchmarks/recorded/trace_scale.csv] [--plot benchmarks/recorded/trace_scale.png]
       python benchmarks/bench_trace_scale.py merge A.csv B.csv --out ... --plot ...

For each size N: ``rollmux trace generate KIND --jobs N --rate-scale X --seed 0`` (the
simulation kind with ``--runtimes fit``), then ``rollmux simulate --policy rollmux
--seed 0`` of that trace (per-phase events, stochastic phase times, the per-phase table
streamed to ``phases.csv``), each in a fresh child process. Wall time from
``time.perf_counter``; CPU time and peak resident memory of that child alone from
``os.wait4``. For N up to ``--in-memory-up-to``, the same replay is also run the old way
in a child (``simulate_trace`` keeping the whole per-phase table, then ``write_result``),
for comparison in the same run; its folder must be byte-identical to the streamed one.
One fixed rate for every size keeps the number of running jobs the same, so time and
memory should grow linearly with N. Budget: the 100,000-job replay within 2 GB resident.

Writes one CSV row per (size, mode) and a plot; prints the rows as JSON lines. ``merge``
joins the CSVs of runs of some sizes each (e.g. 100,000 jobs run on its own) into one
CSV and plot.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUDGET_RSS_MB = 2048.0
COLUMNS = ("jobs", "mode", "wall_s", "cpu_s", "peak_rss_mb", "phase_rows", "phase_events",
           "phases_csv_mb", "jobs_completed", "generate_wall_s", "generate_cpu_s",
           "generate_peak_rss_mb", "load_avg_1min")


def run_child(argv: list[str]) -> dict[str, float]:
    """Run ``argv`` to completion; its wall and CPU seconds and peak RSS (MB), alone."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall_s = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {child.returncode}")
    return {"wall_s": round(wall_s, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1)}


def rollmux(*args: str) -> list[str]:
    """The ``rollmux`` command line (this interpreter, this tree)."""
    return [sys.executable, "-m", "rollmux.cli", *args]


def child_in_memory(trace: str, out: str) -> None:
    """Replay ``trace`` keeping the whole per-phase table, then write the folder."""
    from rollmux.sim.replay import ReplaySpec, run_replay, write_result

    result = run_replay(ReplaySpec(trace=trace, policy="rollmux", seed=0))
    write_result(result, out)


def measure(jobs: int, kind: str, rate_scale: float, in_memory: bool, tmp: Path
            ) -> list[dict[str, Any]]:
    """Generate the N-job trace and replay it (streamed, and in memory when asked)."""
    trace = tmp / f"{kind}-{jobs}.csv"
    extra = ["--runtimes", "fit"] if kind == "simulation" else []
    generated = run_child(rollmux("trace", "generate", kind, "--jobs", str(jobs),
                                  "--rate-scale", f"{rate_scale:g}", "--seed", "0", *extra,
                                  "--out", str(trace), "--quiet"))
    rows = []
    modes = ["streamed", "in-memory"] if in_memory else ["streamed"]
    for mode in modes:
        out = tmp / f"run-{mode}"
        if mode == "streamed":
            figures = run_child(rollmux("simulate", "--trace", str(trace), "--policy",
                                        "rollmux", "--seed", "0", "--out", str(out),
                                        "--quiet"))
        else:
            figures = run_child([sys.executable, __file__, "_child_in_memory", str(trace),
                                 str(out)])
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        phases = out / "phases.csv"
        rows.append({
            "jobs": jobs, "mode": mode, **figures,
            "phase_rows": summary["phase_rows"], "phase_events": summary["phase_events"],
            "phases_csv_mb": round(phases.stat().st_size / 2**20, 1),
            "jobs_completed": summary["jobs_completed"],
            "generate_wall_s": generated["wall_s"], "generate_cpu_s": generated["cpu_s"],
            "generate_peak_rss_mb": generated["peak_rss_mb"],
            "load_avg_1min": round(os.getloadavg()[0], 1),
        })
        print(json.dumps(rows[-1]), flush=True)
    if in_memory:
        same = all(
            (tmp / "run-streamed" / f.name).read_bytes() == f.read_bytes()
            for f in (tmp / "run-in-memory").iterdir() if f.name != "config.json")
        if not same:
            raise RuntimeError(f"{jobs} jobs: streamed and in-memory folders differ")
    for mode in modes:
        shutil.rmtree(tmp / f"run-{mode}")
    trace.unlink()
    return rows


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Wall time and peak RSS against jobs, log-log, one line per mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for mode, marker, color in (("streamed", "o", "C0"), ("in-memory", "s", "C1")):
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            continue
        jobs = [r["jobs"] for r in mine]
        axes[0].plot(jobs, [r["wall_s"] for r in mine], marker=marker, color=color,
                     label=f"{mode}, wall")
        axes[0].plot(jobs, [r["cpu_s"] for r in mine], marker=marker, color=color,
                     linestyle=":", label=f"{mode}, CPU")
        axes[1].plot(jobs, [r["peak_rss_mb"] for r in mine], marker=marker, color=color,
                     label=mode)
    axes[1].axhline(BUDGET_RSS_MB, color="grey", linestyle="--", label="2 GB budget")
    for ax, label in zip(axes, ("replay time (s)", "peak RSS (MB)"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("jobs in the trace")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """The measured rows as CSV (columns :data:`COLUMNS`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows written by :func:`write_rows`, numbers as numbers."""
    with open(path, encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    return [{k: v if k == "mode" else (int(v) if v.isdigit() else float(v))
             for k, v in row.items()} for row in rows]


def title(args: argparse.Namespace) -> str:
    """The plot's title: what was replayed."""
    return (f"rollmux replay of {args.kind} traces at {args.rate_scale:g}x the paper's "
            "arrival rate (2-core VM)")


def main(argv: list[str] | None = None) -> int:
    """Measure every size, write the CSV and the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="run",
                        choices=("run", "merge", "_child_in_memory"))
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[1000, 3000, 10000, 30000, 100000])
    parser.add_argument("--kind", choices=("production", "simulation"), default="simulation")
    parser.add_argument("--rate-scale", type=float, default=25.0)
    parser.add_argument("--in-memory-up-to", type=int, default=10000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/recorded/trace_scale.csv")
    parser.add_argument("--plot", type=Path,
                        default=ROOT / "benchmarks/recorded/trace_scale.png")
    args = parser.parse_args(argv)
    if args.what == "_child_in_memory":
        child_in_memory(*args.paths)
        return 0
    if args.what == "merge":  # runs of some sizes each (e.g. 100,000 jobs on its own)
        merged = [row for path in args.paths for row in read_rows(Path(path))]
        merged.sort(key=lambda r: (r["jobs"], r["mode"] != "streamed"))
        write_rows(merged, args.out)
        plot(merged, args.plot, title(args))
        return 0
    print(json.dumps({"python": platform.python_version(), "cores": os.cpu_count(),
                      "platform": platform.platform(),
                      "start_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}),
          flush=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in args.sizes:
            rows += measure(jobs, args.kind, args.rate_scale, jobs <= args.in_memory_up_to,
                            Path(tmp))
            # Written after every size: a long run that is stopped keeps what it measured.
            write_rows(rows, args.out)
            plot(rows, args.plot, title(args))
    print(json.dumps({"end_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
