"""Benchmark: RollMux placement decision latency vs concurrent jobs (paper Table 5).

For each cluster size, admits a seeded production-style job mix with the policy until
that many jobs run concurrently, then times further decisions on the snapshot without
applying them (rollmux.placement.bench.bench_placement). Target: median <= 60 ms at
2,000 concurrent jobs on a 2-core machine, near-linear growth (paper: 591 ms, C++).

    .venv/bin/python benchmarks/bench_placement.py [--sizes 100 250 500 1000 2000]
        [--seed 0] [--decisions 50] [--policy rollmux] [--json out.json]
    .venv/bin/python benchmarks/bench_placement.py --compare 200 [--seed 0]

``--compare N`` instead admits one N-job mix with every online policy and prints hourly
cost, worst-case SLO attainment and admission mix (rollmux.placement.bench.compare_policies).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from rollmux.placement.bench import bench_placement, compare_policies


def main() -> None:
    """Print a Markdown table (and optionally write JSON rows)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 250, 500, 1000, 2000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decisions", type=int, default=50)
    parser.add_argument("--policy", default="rollmux")
    parser.add_argument("--json", default=None, help="also write the rows to this JSON file")
    parser.add_argument("--compare", type=int, default=None, help="compare policies on N jobs")
    args = parser.parse_args()
    if args.compare is not None:
        _compare(args.compare, args.seed, args.json)
        return
    start = time.perf_counter()
    rows = []
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; policy {args.policy}, seed {args.seed}, "
          f"{args.decisions} timed decisions per size")
    print()
    print("| concurrent jobs | groups | median (ms) | p95 (ms) | max (ms) | "
          "new-job profile (ms) | direct / scaling / new (%) | build (s) |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|")
    for size in args.sizes:
        row = bench_placement(size, args.seed, args.decisions, policy=args.policy)
        rows.append(row)
        mix = row["admission_mix"]
        shares = " / ".join(
            f"{100 * mix.get(k, 0.0):.1f}"
            for k in ("direct-packing", "rollout-scaling", "new-group")
        )
        print(f"| {size} | {row['groups']} | {row['median_ms']:.2f} | {row['p95_ms']:.2f} | "
              f"{row['max_ms']:.2f} | {row['profile_median_ms']:.1f} | {shares} | "
              f"{row['build_s']:.1f} |", flush=True)
    print()
    print(f"total wall time: {time.perf_counter() - start:.0f} s")
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
