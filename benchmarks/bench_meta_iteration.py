"""Benchmark: exact meta-iteration time of a 10-job group (targets in benchmarks/RESULTS.md).

Targets (core-model issue, section 7): median <= 200 us with one training pool,
<= 2 ms for arbitrary pinning. Also times Karp's reference method on the same
groups, so the ratio of the two exact methods is measured in one run.

    .venv/bin/python benchmarks/bench_meta_iteration.py [--groups 200] [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np

from rollmux import meta_iteration_time
from rollmux.schedule.graph import round_robin_schedule
from rollmux.schedule.maxplus import steady_state_period


def _groups(rng: np.random.Generator, n_groups: int, n_jobs: int, crossing: bool) -> list[tuple]:
    """Random 10-job groups: phase times 50-900 s, 4 rollout nodes, 1 or 3 training nodes."""
    out = []
    for _ in range(n_groups):
        r = rng.uniform(50, 900, n_jobs).tolist()
        t = rng.uniform(50, 900, n_jobs).tolist()
        rn = rng.integers(0, 4, n_jobs).tolist()
        tn = rng.integers(0, 3, n_jobs).tolist() if crossing else [0] * n_jobs
        out.append((r, t, rn, tn))
    return out


def _median_us(fn, groups: list[tuple], repeat: int) -> float:
    """Median over groups of the best-of-``repeat`` per-call time, in microseconds."""
    times = []
    for g in groups:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn(*g)
            best = min(best, time.perf_counter() - t0)
        times.append(best * 1e6)
    return statistics.median(times)


def main() -> None:
    """Print one JSON object with medians per case and method."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    result: dict[str, object] = {
        "machine": f"{platform.machine()} {platform.python_version()}",
        "jobs": 10,
        "groups": args.groups,
    }
    for case, crossing in (("one_training_pool", False), ("arbitrary_pinning", True)):
        groups = _groups(rng, args.groups, 10, crossing)
        howard = _median_us(meta_iteration_time, groups, args.repeat)
        karp = _median_us(
            lambda r, t, rn, tn: steady_state_period(round_robin_schedule(r, t, rn, tn), "karp"),
            groups,
            max(1, args.repeat // 4),
        )
        result[case] = {
            "median_us": round(howard, 1),
            "karp_median_us": round(karp, 1),
            "karp_over_howard": round(karp / howard, 2),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
