"""Decision-latency benchmark of RollMux placement (paper Table 5).

:func:`bench_placement` admits a seeded production-style job mix
(:func:`rollmux.experiments.jobmix.production_mix`: Qwen 3B-32B, max response 4k-32k,
single/multi-turn, SLO ~ U(1, 2)) one job at a time with the ``rollmux`` policy until
``jobs`` jobs run concurrently, then times ``decisions`` further decisions on the same
snapshot without applying them. Each timed decision starts with the arriving job's
profile already computed (the paper's one-shot profiler runs before admission; the
phase model costs ~4 ms per job) and with the policy's per-group cache warm from the
admissions (in a live cluster only the group that changed is re-summarised).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rollmux.experiments.jobmix import production_mix
from rollmux.group import CoExecutionGroup, node_capacity_from_hardware
from rollmux.hardware import Hardware, load_hardware
from rollmux.model import resolve
from rollmux.phasetimes import phase_times
from rollmux.placement.base import group_members, group_pools
from rollmux.placement.registry import get_policy
from rollmux.placement.snapshot import ClusterSnapshot, GroupKind, apply, empty_snapshot

__all__ = ["bench_placement", "compare_policies", "slo_attainment"]

# Online policies whose decisions are single placements (the optimum is benchmarked by
# rollmux.placement.optimum.bench_optimum).
_BENCHABLE = frozenset(
    {"rollmux", "rollmux-noprune", "rollmux-expected", "rollmux-ordersearch",
     "rollmux-costweighted", "rollmux-repeat", "solo-d", "verl", "gavel-plus", "random",
     "greedy"}
)


def bench_placement(
    jobs: int,
    seed: int,
    decisions: int = 50,
    hw: Hardware | None = None,
    policy: str = "rollmux",
    progress: Callable[[int], object] | None = None,
) -> dict[str, Any]:
    """Median, p95 and p99 decision latency (ms) of ``policy`` with ``jobs`` concurrent jobs.

    Returns ``jobs``, ``seed``, ``decisions``, ``policy``, ``median_ms``, ``p95_ms``,
    ``p99_ms``, ``max_ms``, ``median_cpu_ms`` and ``p99_cpu_ms`` (the decision's CPU time,
    which other processes on a shared machine inflate less than its wall time; p99 is
    the 99th percentile of the ``decisions`` latencies, linear interpolation),
    ``profile_median_ms`` (the phase model for one new job, not part of the decision),
    ``groups``, ``rollout_nodes``, ``train_nodes``, ``cost_usd_per_h``, the admission mix
    while building (``admission_mix``: strategy -> share), the wall time of building the cluster
    (``build_s``, including generating the jobs, ``generate_s`` of it) and its CPU time
    (``build_cpu_s``). ``progress(1)`` is called after each placed job and each timed
    decision (outside the timed region).
    """
    for name, value, minimum in (("jobs", jobs, 1), ("decisions", decisions, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    hw = load_hardware() if hw is None else hw
    start, start_cpu = time.perf_counter(), time.process_time()
    mix = production_mix(jobs + decisions, seed, hw)
    generate_s = time.perf_counter() - start
    admitted, arrivals = mix[:jobs], mix[jobs:]
    if policy not in _BENCHABLE:
        raise ValueError(f"policy must be one of {sorted(_BENCHABLE)}, got {policy!r}")
    placer = get_policy(policy)
    snapshot = empty_snapshot(hw)
    strategies: Counter[str] = Counter()
    for job in admitted:
        decision = placer.place(job, snapshot)
        strategies[decision.strategy.value] += 1
        snapshot = apply(snapshot, decision)
        if progress is not None:
            progress(1)
    build_s = time.perf_counter() - start
    build_cpu_s = time.process_time() - start_cpu
    profile_ms = []
    for job in arrivals:
        t0 = time.perf_counter()
        phase_times(job, hw)  # uncached: what the one-shot profile costs in this model
        profile_ms.append((time.perf_counter() - t0) * 1e3)
        resolve(job, hw)
    latencies_ms, cpu_ms = [], []
    for job in arrivals:
        t0, c0 = time.perf_counter(), time.thread_time()
        placer.place(job, snapshot)
        latencies_ms.append((time.perf_counter() - t0) * 1e3)
        cpu_ms.append((time.thread_time() - c0) * 1e3)
        if progress is not None:
            progress(1)
    lat = np.asarray(latencies_ms)
    pools = Counter(node.pool.value for node in snapshot.nodes.values())
    return {
        "jobs": jobs,
        "seed": seed,
        "decisions": decisions,
        "policy": policy,
        "median_ms": float(np.median(lat)),
        "median_cpu_ms": float(np.median(cpu_ms)),
        "p95_ms": float(np.percentile(lat, 95)),
        "p99_ms": float(np.percentile(lat, 99)),
        "p99_cpu_ms": float(np.percentile(cpu_ms, 99)),
        "max_ms": float(lat.max()),
        "profile_median_ms": float(np.median(profile_ms)),
        "groups": len(snapshot.groups),
        "rollout_nodes": pools.get("rollout", 0),
        "train_nodes": pools.get("train", 0),
        "cost_usd_per_h": snapshot.cost_usd_per_h(),
        "admission_mix": {k: v / jobs for k, v in sorted(strategies.items())},
        "build_s": build_s,
        "build_cpu_s": build_cpu_s,
        "generate_s": generate_s,
    }


def slo_attainment(snapshot: ClusterSnapshot) -> float:
    """Share of jobs in shared groups whose worst-case slowdown is within their SLO.

    Each shared group is evaluated with the group model at worst-case phase times (round
    robin in join order); jobs of dedicated and co-located groups count as met (they run
    alone on their allocation). 1.0 for an empty snapshot.
    """
    if not snapshot.jobs:
        return 1.0
    hw = snapshot.hw
    met = 0
    for group in snapshot.groups.values():
        if group.kind is not GroupKind.SHARED:
            met += len(group.jobs)
            continue
        model = CoExecutionGroup(
            jobs=group_members(group, snapshot, worst_case=True),
            rollout_node_ids=group.rollout_nodes,
            train_node_ids=group.train_nodes,
            pools=group_pools(group, snapshot),
            node_capacity=node_capacity_from_hardware(hw),
        )
        met += sum(model.metrics().slo_ok)
    return met / len(snapshot.jobs)


def compare_policies(
    jobs: int,
    seed: int,
    policies: Sequence[str] = (
        "rollmux", "rollmux-noprune", "rollmux-expected", "rollmux-ordersearch",
        "rollmux-costweighted", "solo-d", "verl", "gavel-plus", "random", "greedy",
    ),
    hw: Hardware | None = None,
) -> list[dict[str, Any]]:
    """Hourly cost, worst-case SLO attainment and admission mix of each policy on one mix.

    Every policy admits the same seeded production mix of ``jobs`` concurrent jobs (no
    departures); ``random`` uses ``seed`` for its generator.
    """
    hw = load_hardware() if hw is None else hw
    mix = production_mix(jobs, seed, hw)
    rows = []
    for name in policies:
        options: dict[str, Any] = {"seed": seed} if name == "random" else {}
        placer = get_policy(name, **options)
        snapshot = empty_snapshot(hw)
        strategies: Counter[str] = Counter()
        start = time.perf_counter()
        for job in mix:
            decision = placer.place(job, snapshot)
            strategies[decision.strategy.value] += 1
            snapshot = apply(snapshot, decision)
        gpus = snapshot.gpu_counts()
        rows.append({
            "policy": name,
            "jobs": jobs,
            "seed": seed,
            "cost_usd_per_h": snapshot.cost_usd_per_h(),
            "slo_attainment": slo_attainment(snapshot),
            "groups": len(snapshot.groups),
            "gpus": dict(sorted(gpus.items())),
            "admission_mix": {k: v / jobs for k, v in sorted(strategies.items())},
            "seconds": time.perf_counter() - start,
        })
    return rows
