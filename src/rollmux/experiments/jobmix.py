"""Seeded concurrent job mixes for placement benchmarks and tests.

A *mix* is a set of jobs running at the same time (a snapshot), drawn from the paper's
production distribution (notes sec. 6.4): Qwen 3B-32B, max response 4k-32k tokens,
single- and multi-turn tasks, SLO ~ Uniform(1, 2). It reuses
:func:`rollmux.traces.generate.generate_production` with the job count set to the mix
size and the GPU options restricted to 8 or 16 GPUs per pool (the 32-GPU rollout option
of the 32B jobs becomes 16 + 16), so every job spans one or two nodes per pool.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rollmux.hardware import Hardware, load_hardware
from rollmux.jobs import RLJob
from rollmux.traces.generate import generate_production, load_workloads

__all__ = ["MAX_GPUS_PER_POOL", "production_mix", "production_mix_workloads"]

# The benchmark mixes use 8 or 16 GPUs per pool (one or two 8-GPU nodes).
MAX_GPUS_PER_POOL = 16


def production_mix_workloads(n_jobs: int) -> dict[str, Any]:
    """The packaged workload estimates with ``n_jobs`` production jobs of <= 16 GPUs per pool."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs = {n_jobs!r}: expected an integer >= 1")
    workloads = copy.deepcopy(load_workloads())
    spec = workloads["production"]
    spec["jobs"] = n_jobs
    gpus: Mapping[str, Any] = spec["gpus_by_size"]
    for size, entry in gpus.items():
        kept = [
            (list(option), weight)
            for option, weight in zip(entry["options"], entry["weights"], strict=True)
            if max(option) <= MAX_GPUS_PER_POOL
        ]
        if not kept:  # every option too large: fall back to two nodes per pool
            kept = [([MAX_GPUS_PER_POOL, MAX_GPUS_PER_POOL], 1.0)]
        spec["gpus_by_size"][size] = {
            "options": [option for option, _ in kept],
            "weights": [weight for _, weight in kept],
        }
    return workloads


def production_mix(n_jobs: int, seed: int, hw: Hardware | None = None) -> list[RLJob]:
    """``n_jobs`` concurrent production-style jobs (seeded; 8 or 16 GPUs per pool)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed = {seed!r}: expected an integer >= 0")
    workloads = production_mix_workloads(n_jobs)
    hardware = load_hardware() if hw is None else hw
    jobs = generate_production(seed, hardware, workloads).jobs
    # Arrival times do not matter for a snapshot; zero them so a mix is a pure set of jobs.
    return [_at_time_zero(job) for job in jobs]


def _at_time_zero(job: RLJob) -> RLJob:
    """The same job arriving at t = 0."""
    return replace(job, arrival_s=0.0)
