"""Benchmark: RollMux placement decision latency vs concurrent jobs (paper Table 5).

For each cluster size, admits a seeded production-style job mix with the policy until
that many jobs run concurrently, then times further decisions on the snapshot without
applying them (rollmux.experiments.placement_bench.bench_placement). Target: median <= 60 ms at
2,000 concurrent jobs on a 2-core machine, near-linear growth (paper: 591 ms, C++).

    .venv/bin/python benchmarks/bench_placement.py [--sizes 100 250 500 1000 2000]
        [--seed 0] [--decisions 50] [--policy rollmux] [--json out.json]
    .venv/bin/python benchmarks/bench_placement.py --compare 200 [--seed 0]
    .venv/bin/python benchmarks/bench_placement.py --sizes 1000 2000 5000 10000 20000 \
        --reference /tmp/main-checkout [--rounds 3]

``--compare N`` instead admits one N-job mix with every online policy and prints hourly
cost, worst-case SLO attainment and admission mix
(rollmux.experiments.placement_bench.compare_policies).

``--reference DIR [DIR ...]`` times every size with each reference checkout's code
(``DIR/src``, e.g. an older commit in a temporary git worktree) and then with this one, in
one run, each in a fresh process; it prints the median and p99 decision latency (wall
and CPU) of each and their ratios, and checks that all built the same cluster (groups,
nodes, cost, admission mix). The latencies of this comparison are taken by the same
wrapper around the policy's ``place`` in every process (older checkouts' benchmark
reports no p99), over the ``--decisions`` timed decisions. ``--rounds R`` (default 1)
times every code R times per size, in turn and in reversed order every other round (so
load drifting during the run favours no code); each cell is then the median over the
rounds, and the ratios are of those medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rollmux.experiments.placement_bench import bench_placement, compare_policies


def main() -> None:
    """Print a Markdown table (and optionally write JSON rows)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 250, 500, 1000, 2000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decisions", type=int, default=50)
    parser.add_argument("--policy", default="rollmux")
    parser.add_argument("--json", default=None, help="also write the rows to this JSON file")
    parser.add_argument("--compare", type=int, default=None, help="compare policies on N jobs")
    parser.add_argument("--reference", default=None, nargs="+",
                        help="checkouts whose src/ are timed side by side with this one")
    parser.add_argument("--rounds", type=int, default=1,
                        help="with --reference: time every code this many times per size, "
                             "alternating the order; report the medians")
    args = parser.parse_args()
    if args.compare is not None:
        _compare(args.compare, args.seed, args.json)
        return
    if args.reference is not None:
        _against_reference(args)
        return
    start = time.perf_counter()
    rows = []
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; policy {args.policy}, seed {args.seed}, "
          f"{args.decisions} timed decisions per size")
    print()
    print("| concurrent jobs | groups | median (ms) | median CPU (ms) | p95 (ms) | p99 (ms) | "
          "p99 CPU (ms) | max (ms) | new-job profile (ms) | direct / scaling / new (%) | "
          "build (s) | build CPU (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for size in args.sizes:
        row = bench_placement(size, args.seed, args.decisions, policy=args.policy)
        rows.append(row)
        mix = row["admission_mix"]
        shares = " / ".join(
            f"{100 * mix.get(k, 0.0):.1f}"
            for k in ("direct-packing", "rollout-scaling", "new-group")
        )
        print(f"| {size} | {row['groups']} | {row['median_ms']:.2f} | "
              f"{row['median_cpu_ms']:.2f} | {row['p95_ms']:.2f} | {row['p99_ms']:.2f} | "
              f"{row['p99_cpu_ms']:.2f} | {row['max_ms']:.2f} | "
              f"{row['profile_median_ms']:.1f} | {shares} | "
              f"{row['build_s']:.1f} | {row['build_cpu_s']:.1f} |", flush=True)
    print()
    print(f"total wall time: {time.perf_counter() - start:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


# Run in a fresh interpreter: bench_placement plus the process CPU time of the whole call,
# and every decision's wall and CPU time taken around the policy's place() (the same code
# for every checkout, whose own bench_placement may not report the p99).
_CHILD = (
    "import json, sys, time\n"
    "import numpy as np\n"
    "import rollmux.experiments.placement_bench as pb\n"
    "jobs, seed, decisions, policy = sys.argv[1:5]\n"
    "calls = []\n"
    "make = pb.get_policy\n"
    "class Timed:\n"
    "    def __init__(self, inner):\n"
    "        self.inner = inner\n"
    "    def place(self, job, snapshot):\n"
    "        t, c = time.perf_counter(), time.thread_time()\n"
    "        out = self.inner.place(job, snapshot)\n"
    "        calls.append(((time.perf_counter() - t) * 1e3, (time.thread_time() - c) * 1e3))\n"
    "        return out\n"
    "pb.get_policy = lambda name, **kw: Timed(make(name, **kw))\n"
    "t0 = time.process_time()\n"
    "row = pb.bench_placement(int(jobs), int(seed), int(decisions), policy=policy)\n"
    "row['cpu_s'] = time.process_time() - t0\n"
    "timed = np.asarray(calls[-int(decisions):])\n"
    "for name, col in (('wall', 0), ('cpu', 1)):\n"
    "    row[f'timed_median_{name}_ms'] = float(np.median(timed[:, col]))\n"
    "    row[f'timed_p99_{name}_ms'] = float(np.percentile(timed[:, col], 99))\n"
    "print(json.dumps(row))\n"
)
_SAME_CLUSTER = ("groups", "rollout_nodes", "train_nodes", "cost_usd_per_h", "admission_mix")


def _run_child(src: Path, jobs: int, seed: int, decisions: int, policy: str) -> dict[str, Any]:
    """bench_placement with the package under ``src`` first on the path, in a new process."""
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(jobs), str(seed), str(decisions), policy],
        env=env, capture_output=True, text=True, check=True,
    )
    row: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return row


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run with every timing replaced by its median over ``runs``."""
    out = dict(runs[0])
    for key in ("timed_median_wall_ms", "timed_median_cpu_ms", "timed_p99_wall_ms",
                "timed_p99_cpu_ms", "cpu_s"):
        out[key] = statistics.median(run[key] for run in runs)
    return out


def _against_reference(args: argparse.Namespace) -> None:
    """Time each size with every reference checkout, then with this one; print ratios."""
    if args.rounds < 1:
        raise SystemExit(f"--rounds {args.rounds}: expected an integer >= 1")
    references = [Path(r).resolve() / "src" for r in args.reference]
    here = Path(__file__).resolve().parents[1] / "src"
    for reference in references:
        if not (reference / "rollmux").is_dir():
            raise SystemExit(f"--reference: {reference / 'rollmux'} is not a folder")
    start = time.perf_counter()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; policy {args.policy}, seed {args.seed}, "
          f"{args.decisions} timed decisions per size, {args.rounds} round(s) per code "
          f"(medians); load average at start "
          f"{os.getloadavg()[0]:.1f}; references {', '.join(map(str, references))}")
    print()
    print("| jobs | code | groups | median (ms) | median CPU (ms) | p99 (ms) | p99 CPU (ms) | "
          "build CPU (s) | ref / new: median CPU | p99 CPU |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    codes = [(str(ref.parent), ref) for ref in references] + [("this checkout", here)]
    for size in args.sizes:
        timed: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in codes}
        for k in range(args.rounds):
            for name, src in codes if k % 2 == 0 else codes[::-1]:
                timed[name].append(_run_child(src, size, args.seed, args.decisions,
                                              args.policy))
        runs = [(name, _median_run(timed[name])) for name, _ in codes]
        new = runs[-1][1]
        for name, run in runs[:-1]:
            for key in _SAME_CLUSTER:
                if run[key] != new[key]:
                    raise SystemExit(f"{size} jobs: {key} differs ({name}): {run[key]!r} vs "
                                     f"{new[key]!r}")
        rows.append({"jobs": size, "runs": [{"code": name, **run, "rounds": timed[name]}
                                            for name, run in runs]})
        for name, run in runs:
            ratio = (f"{run['timed_median_cpu_ms'] / new['timed_median_cpu_ms']:.2f} | "
                     f"{run['timed_p99_cpu_ms'] / new['timed_p99_cpu_ms']:.2f}")
            print(f"| {size} | {name} | {run['groups']} | {run['timed_median_wall_ms']:.3f} | "
                  f"{run['timed_median_cpu_ms']:.3f} | {run['timed_p99_wall_ms']:.3f} | "
                  f"{run['timed_p99_cpu_ms']:.3f} | {run['cpu_s']:.1f} | {ratio} |", flush=True)
    print()
    print(f"same clusters built (groups, nodes, cost, admission mix) at every size; total wall "
          f"time {time.perf_counter() - start:.0f} s; load average at end "
          f"{os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


def _compare(jobs: int, seed: int, json_path: str | None) -> None:
    """Print the policy comparison table for one mix."""
    rows = compare_policies(jobs, seed)
    solo = next(r["cost_usd_per_h"] for r in rows if r["policy"] == "solo-d")
    print(f"{jobs} concurrent production-mix jobs, seed {seed}, no departures")
    print()
    print("| policy | cost ($/h) | Solo-D / policy | worst-case SLO met (%) | groups | "
          "H20 | H800 | direct / scaling / new (%) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        mix = r["admission_mix"]
        shares = " / ".join(
            f"{100 * mix.get(k, 0.0):.1f}"
            for k in ("direct-packing", "rollout-scaling", "new-group")
        )
        print(f"| {r['policy']} | {r['cost_usd_per_h']:.0f} | {solo / r['cost_usd_per_h']:.2f} | "
              f"{100 * r['slo_attainment']:.1f} | {r['groups']} | {r['gpus'].get('H20', 0)} | "
              f"{r['gpus'].get('H800', 0)} | {shares} |")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
