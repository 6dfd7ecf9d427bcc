"""Benchmark: RollMux placement decision latency vs concurrent jobs (paper Table 5).

For each cluster size, admits a seeded production-style job mix with the policy until
that many jobs run concurrently, then times further decisions on the snapshot without
applying them (rollmux.experiments.placement_bench.bench_placement). Target: median <= 60 ms at
2,000 concurrent jobs on a 2-core machine, near-linear growth (paper: 591 ms, C++).

    .venv/bin/python benchmarks/bench_placement.py [--sizes 100 250 500 1000 2000]
        [--seed 0] [--decisions 50] [--policy rollmux] [--json out.json]
    .venv/bin/python benchmarks/bench_placement.py --compare 200 [--seed 0]
    .venv/bin/python benchmarks/bench_placement.py --sizes 1000 2000 5000 10000 20000 \
        --reference /tmp/main-checkout

``--compare N`` instead admits one N-job mix with every online policy and prints hourly
cost, worst-case SLO attainment and admission mix
(rollmux.experiments.placement_bench.compare_policies).

``--reference DIR`` times every size twice in one run, alternating, each in a fresh
process: with the code of another checkout (``DIR/src``, e.g. main in a temporary git
worktree) and with this one; it prints both and their ratios, and checks that both built
the same cluster (groups, nodes, cost, admission mix).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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
    parser.add_argument("--reference", default=None,
                        help="a checkout whose src/ is timed side by side with this one")
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


# Run in a fresh interpreter: bench_placement plus the process CPU time of the whole call.
_CHILD = (
    "import json, sys, time\n"
    "from rollmux.experiments.placement_bench import bench_placement\n"
    "jobs, seed, decisions, policy = sys.argv[1:5]\n"
    "t0 = time.process_time()\n"
    "row = bench_placement(int(jobs), int(seed), int(decisions), policy=policy)\n"
    "row['cpu_s'] = time.process_time() - t0\n"
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


def _p99(row: dict[str, Any], key: str) -> str:
    """A p99 cell: the row's value, or '-' for a reference checkout from before the p99
    keys."""
    return f"{row[key]:.2f}" if key in row else "-"


def _against_reference(args: argparse.Namespace) -> None:
    """Time each size with the reference checkout and with this one; print ratios."""
    reference = Path(args.reference).resolve() / "src"
    here = Path(__file__).resolve().parents[1] / "src"
    if not (reference / "rollmux").is_dir():
        raise SystemExit(f"--reference: {reference / 'rollmux'} is not a folder")
    start = time.perf_counter()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; policy {args.policy}, seed {args.seed}, "
          f"{args.decisions} timed decisions per size; load average at start "
          f"{os.getloadavg()[0]:.1f}; reference {reference}")
    print()
    print("| jobs | groups | median ref (ms) | median (ms) | ref / new | median CPU ref (ms) | "
          "median CPU (ms) | p99 ref (ms) | p99 (ms) | p99 CPU ref (ms) | p99 CPU (ms) | "
          "build ref (s) | build (s) | ref / new | CPU ref (s) | CPU (s) | ref / new |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for size in args.sizes:
        ref = _run_child(reference, size, args.seed, args.decisions, args.policy)
        new = _run_child(here, size, args.seed, args.decisions, args.policy)
        for key in _SAME_CLUSTER:
            if ref[key] != new[key]:
                raise SystemExit(f"{size} jobs: {key} differs: {ref[key]!r} vs {new[key]!r}")
        rows.append({"jobs": size, "reference": ref, "new": new})
        print(f"| {size} | {new['groups']} | {ref['median_ms']:.2f} | {new['median_ms']:.2f} | "
              f"{ref['median_ms'] / new['median_ms']:.2f} | {ref['median_cpu_ms']:.3f} | "
              f"{new['median_cpu_ms']:.3f} | {_p99(ref, 'p99_ms')} | {_p99(new, 'p99_ms')} | "
              f"{_p99(ref, 'p99_cpu_ms')} | {_p99(new, 'p99_cpu_ms')} | {ref['build_s']:.1f} | "
              f"{new['build_s']:.1f} | {ref['build_s'] / new['build_s']:.1f} | "
              f"{ref['cpu_s']:.1f} | {new['cpu_s']:.1f} | {ref['cpu_s'] / new['cpu_s']:.1f} |",
              flush=True)
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
