"""Adapters from public GPU-cluster traces to rollmux traces (arrivals, durations, profiles).

Alibaba GPU cluster trace 2023 (openb_pod_list_default.csv): arrivals and durations of
multi-GPU pods. Philly (philly_runtime.csv): job runtimes only, so arrivals are Poisson.
Both map each job to a Table 6 profile (workloads.yaml) whose phase times are drawn from
the profile's ranges; iterations = duration / solo iteration time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.io import open_input
from rollmux.traces import generate, philly

HOUR_S = 3600.0
ALIBABA_POD_FILE = "alibaba_openb_pod_list_default.csv"
ALIBABA_COLUMNS = (
    "name",
    "num_gpu",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
#: Pod phases kept by default: pods that were scheduled and ran (Pending pods never ran).
ALIBABA_PHASES = ("Running", "Succeeded", "Failed")
#: Size class of an RL job by the pod's GPU count (<= 2 small, <= 4 medium, else large).
SIZE_BY_GPUS = ((2, "S"), (4, "M"))


@dataclasses.dataclass(frozen=True)
class AlibabaFilter:
    """Which pods become jobs: at least min_gpus GPUs, a kept phase, a positive run time."""

    min_gpus: int = 2
    phases: tuple[str, ...] = ALIBABA_PHASES



def _job_lasting(
    job_id: str,
    profile: str,
    rng: np.random.Generator,
    profiles: Any,
    spec: Any,
    slo: float,
    arrival_s: float,
    duration_s: float,
    hw: Any,
) -> Any:
    """A job of ``profile`` whose iterations make it last about ``duration_s`` alone."""
    job = generate.profile_job(
        job_id, profile, rng, profiles, float(spec["max_over_expected"]),
        slo=slo, arrival_s=arrival_s,
    )
    times = generate._phase_times(job, hw)
    return dataclasses.replace(
        job, iterations=generate.iterations_for(duration_s, times.solo_iteration_s)
    )

def read_alibaba_pods(path: str | Path, keep: AlibabaFilter = AlibabaFilter()) -> pd.DataFrame:
    """Filtered pods with arrival_s (creation) and duration_s (deletion - scheduled), sorted."""
    try:
        with open_input(path) as stream:
            pods = pd.read_csv(stream, usecols=list(ALIBABA_COLUMNS))
    except ValueError as exc:  # missing columns
        raise ValueError(f"{path}: not an Alibaba openb pod list ({exc})") from None
    for column in ("num_gpu", "creation_time", "deletion_time", "scheduled_time"):
        pods[column] = pd.to_numeric(pods[column], errors="coerce")
    started = pods["scheduled_time"].fillna(pods["creation_time"])
    pods = pods.assign(duration_s=pods["deletion_time"] - started, arrival_s=pods["creation_time"])
    mask = (
        (pods["num_gpu"] >= keep.min_gpus)
        & pods["pod_phase"].isin(keep.phases)
        & pods["scheduled_time"].notna()
        & (pods["duration_s"] > 0)
        & pods["arrival_s"].notna()
    )
    kept = pods.loc[mask].sort_values(["arrival_s", "name"], kind="mergesort")
    if kept.empty:
        raise ValueError(f"{path}: no pods pass the filter {keep}")
    return kept.reset_index(drop=True)


def size_class(num_gpus: int) -> str:
    """Table 6 size class (S, M, L) of a pod by its GPU count."""
    for limit, name in SIZE_BY_GPUS:
        if num_gpus <= limit:
            return name
    return "L"


def _type_prefixes(profile: str, profiles: Mapping[str, Any]) -> list[str]:
    """Profile-type prefixes (BL, RH, TH) a --profile value allows."""
    names = generate._profile_names(profile, profiles)
    return sorted({name.split("-")[0] for name in names})


def _profile_for(prefix: str, size: str, profiles: Mapping[str, Any]) -> str:
    """The configuration name for a type prefix and size class."""
    name = f"{prefix}-{size}"
    if name not in profiles:
        raise ValueError(f"profile {name!r} missing from the workloads file")
    return name


def adapt_alibaba(
    path: str | Path,
    seed: int = 0,
    horizon_h: float = 336.0,
    mean_duration_h: float | None = None,
    profile: str = "mixed",
    keep: AlibabaFilter = AlibabaFilter(),
    hw: Any = None,
    workloads: Mapping[str, Any] | None = None,
) -> generate.Generated:
    """Alibaba multi-GPU pods -> RL jobs: arrivals rescaled to horizon_h, sizes by GPU count.

    Durations are compressed by the same factor as arrivals (the load pattern is kept),
    unless mean_duration_h is given, in which case they are scaled to that mean instead.
    """
    document = workloads or generate.load_workloads()
    profiles = document["profiles"]
    spec = document["simulation"]
    hw = generate._hardware(hw)
    pods = read_alibaba_pods(path, keep)
    rng = np.random.default_rng(seed)
    arrival = pods["arrival_s"].to_numpy(dtype=float)
    span = float(arrival.max() - arrival.min())
    factor = horizon_h * HOUR_S / span if span > 0 else 1.0
    arrivals = np.round((arrival - arrival.min()) * factor, 0)
    duration = pods["duration_s"].to_numpy(dtype=float)
    if mean_duration_h is None:
        durations_s = duration * factor
    else:
        durations_s = duration * (mean_duration_h * HOUR_S / duration.mean())
    prefixes = _type_prefixes(profile, profiles)
    slos = generate._slo_draws(rng, len(pods), spec["slo"])
    jobs = []
    for i, pod in enumerate(pods.itertuples(index=False)):
        prefix = prefixes[int(rng.integers(0, len(prefixes)))]
        name = _profile_for(prefix, size_class(int(pod.num_gpu)), profiles)
        jobs.append(
            _job_lasting(
                f"ali-{i:04d}", name, rng, profiles, spec, float(slos[i]), float(arrivals[i]),
                float(durations_s[i]), hw,
            )
        )
    targets = {
        "jobs": len(pods),
        "horizon_h": horizon_h,
        "mean_duration_h": mean_duration_h
        if mean_duration_h is not None
        else round(float(durations_s.mean()) / HOUR_S, 3),
    }
    comments = (
        f"adapted from {Path(path).name}: pods with num_gpu >= {keep.min_gpus}, phase in "
        f"{'/'.join(keep.phases)}, scheduled, deletion after start",
        f"arrivals rescaled by {factor:.6g} to {horizon_h:g} h; profile {profile}; seed {seed}",
    )
    return generate.Generated(jobs, targets, generate._summary(jobs, hw), comments)


def adapt_philly(
    path: str | Path,
    seed: int = 0,
    jobs: int = 300,
    horizon_h: float = 580.0,
    match: Sequence[float] | None = None,
    profile: str = "mixed",
    hw: Any = None,
    workloads: Mapping[str, Any] | None = None,
) -> generate.Generated:
    """Philly runtimes -> RL jobs: Poisson arrivals over horizon_h, runtimes as durations.

    match = (mean_h, max_h) power-transforms the sampled runtimes to those statistics
    (as the simulation generator does); None keeps the raw runtimes.
    """
    document = workloads or generate.load_workloads()
    profiles = document["profiles"]
    spec = document["simulation"]
    hw = generate._hardware(hw)
    names = generate._profile_names(profile, profiles)
    rng = np.random.default_rng(seed)
    arrivals = generate.poisson_arrivals_s(rng, jobs, horizon_h * HOUR_S)
    sampler = philly.empirical_sampler(philly.read_runtimes(path, float(spec["min_runtime_s"])))
    raw_s = sampler(rng, jobs)
    if match is None:
        durations_s = raw_s
    else:
        mean_h, max_h = match
        durations_s = generate.match_mean_and_max(raw_s, mean_h, max_h) * HOUR_S
    chosen = [names[i] for i in rng.integers(0, len(names), size=jobs)]
    slos = generate._slo_draws(rng, jobs, spec["slo"])
    out = []
    for i in range(jobs):
        out.append(
            _job_lasting(
                f"philly-{i:04d}", chosen[i], rng, profiles, spec, float(slos[i]),
                float(arrivals[i]), float(durations_s[i]), hw,
            )
        )
    targets: dict[str, Any] = {"jobs": jobs, "horizon_h": horizon_h}
    if match is not None:
        targets.update(mean_duration_h=match[0], max_duration_h=match[1])
    comments = (
        f"adapted from {Path(path).name}: runtimes >= {spec['min_runtime_s']:g} s, "
        f"Poisson arrivals over {horizon_h:g} h; profile {profile}; seed {seed}",
    )
    return generate.Generated(out, targets, generate._summary(out, hw), comments)
