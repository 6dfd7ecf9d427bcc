"""Benchmark the exact `optimal` partition (set-partitioning MILP) against brute force.

Times :func:`rollmux.placement.optimum.compare_solvers` on seeded production-style mixes
(:func:`rollmux.experiments.jobmix.production_mix`): brute force side by side at 6-13 jobs
(capped at 120 s), then 30 jobs in both pinning spaces. Prints one JSON object per run
and, with ``--out``, writes a Markdown table.

    .venv/bin/python benchmarks/bench_optimum.py --out benchmarks/RESULTS-optimum.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path
from typing import Any

from rollmux.experiments.jobmix import production_mix
from rollmux.hardware import Hardware, load_hardware
from rollmux.placement.optimum import Orders, Space, compare_solvers

BRUTEFORCE_SIZES = (6, 8, 10, 11, 12, 13)
BRUTEFORCE_TIME_LIMIT_S = 120.0
LARGE_RUNS: tuple[tuple[int, int, Space, float | None], ...] = (
    # (jobs, seed, space, time limit of the optimum in s)
    (30, 0, "rollmux", None),
    (30, 1, "rollmux", None),
    (30, 2, "rollmux", None),
    (30, 1, "full", None),
    (30, 2, "full", None),
    (30, 0, "full", 600.0),
)


def _fmt(value: Any, digits: int = 3) -> str:
    """A table cell: rounded floats, '-' for None."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def bench_optimum(
    jobs: int,
    seed: int,
    hw: Hardware,
    *,
    bruteforce: bool,
    space: Space = "full",
    orders: Orders = "all",
    time_limit_s: float | None = None,
) -> dict[str, Any]:
    """One run: the optimum (and brute force) on ``production_mix(jobs, seed)``."""
    mix = production_mix(jobs, seed, hw)
    return {
        "jobs": jobs,
        "seed": seed,
        **compare_solvers(
            mix,
            hw,
            bruteforce=bruteforce,
            bruteforce_time_limit_s=BRUTEFORCE_TIME_LIMIT_S,
            orders=orders,
            space=space,
            time_limit_s=time_limit_s,
        ),
    }


def run(seed: int = 0) -> list[dict[str, Any]]:
    """All benchmark runs, printed as they finish."""
    hw = load_hardware()
    rows = []
    for jobs in BRUTEFORCE_SIZES:
        row = bench_optimum(jobs, seed, hw, bruteforce=True)
        print(json.dumps(row), flush=True)
        rows.append(row)
    for jobs, run_seed, space, limit in LARGE_RUNS:
        row = bench_optimum(jobs, run_seed, hw, bruteforce=False, space=space, time_limit_s=limit)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The results table with the machine and command."""
    lines = [
        "# `optimal` partition benchmark",
        "",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs (`{platform.processor() or platform.machine()}`).",
        "Command: `.venv/bin/python benchmarks/bench_optimum.py --out "
        "benchmarks/RESULTS-optimum.md`.",
        "Mix: `rollmux.experiments.jobmix.production_mix(jobs, seed)`; groups of at most 5;",
        "round-robin orders: all (up to rotation); brute force capped at 120 s.",
        "",
        "| jobs | seed | space | optimum s | optimum $/h | brute force s | brute force $/h "
        "| brute/optimum time | Solo-D $/h | groups | largest | columns | solver |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        brute_s = r["bruteforce_seconds"]
        if r["bruteforce_finished"] is False:
            brute_cell = f"> {r['bruteforce_time_limit_s']:.0f} (unfinished)"
            ratio = f"> {r['bruteforce_time_limit_s'] / r['seconds']:.0f}"
        else:
            brute_cell = _fmt(brute_s)
            ratio = "-" if brute_s is None else f"{brute_s / r['seconds']:.1f}"
        status = "optimal" if "Status 7: Optimal" in r["solver"] else r["solver"]
        if "not proven optimal" in r["solver"]:
            status = "time limit: not proven optimal"
        lines.append(
            f"| {r['jobs']} | {r['seed']} | {r['space']} | {_fmt(r['seconds'])} "
            f"| {_fmt(r['optimal_cost_usd_per_h'], 2)} | {brute_cell} "
            f"| {_fmt(r['bruteforce_cost_usd_per_h'], 2)} | {ratio} "
            f"| {_fmt(r['solo_cost_usd_per_h'], 2)} | {r['groups']} | {r['largest_group']} "
            f"| {r['columns']} | {status} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the benchmark; write the Markdown table when ``--out`` is given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the brute-force mixes")
    parser.add_argument("--out", type=Path, default=None, help="Markdown file to write")
    args = parser.parse_args()
    rows = run(args.seed)
    if args.out is not None:
        args.out.write_text(markdown(rows), encoding="utf-8")


if __name__ == "__main__":
    main()
