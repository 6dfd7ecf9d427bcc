"""Benchmark: exact meta-iteration time of a 10-job group (targets in benchmarks/RESULTS.md).

Targets (core-model issue, section 7): median <= 200 us with one training pool,
<= 2 ms for arbitrary pinning. Times, on the same groups in one run, the public
entry point (lower-bound certificate, else Howard), Howard's policy iteration alone
and Karp's reference method, and reports their ratios.

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
from rollmux.schedule.graph import round_robin_lists
from rollmux.schedule.maxplus import (
    graph_to_matrix,
    max_cycle_mean_howard,
    max_cycle_mean_karp,
    reduce_event_graph,
)


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


def _howard(r: list, t: list, rn: list, tn: list) -> float | None:
    """Validation, reduction and Howard's policy iteration, without the certificate."""
    return max_cycle_mean_howard(reduce_event_graph(*round_robin_lists(r, t, rn, tn)))


def _karp(r: list, t: list, rn: list, tn: list) -> float:
    """Validation, reduction and Karp's theorem (the reference)."""
    graph = reduce_event_graph(*round_robin_lists(r, t, rn, tn))
    return max_cycle_mean_karp(graph_to_matrix(graph))


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
        auto = _median_us(meta_iteration_time, groups, args.repeat)
        timings = {"median_us": round(auto, 1)}
        for method, solve in (("howard", _howard), ("karp", _karp)):
            median = _median_us(solve, groups, max(1, args.repeat // 4))
            timings[f"{method}_median_us"] = round(median, 1)
            timings[f"{method}_over_default"] = round(median / auto, 2)
        result[case] = timings
    print(json.dumps(result))


if __name__ == "__main__":
    main()
