"""Replay metrics: pure functions of the simulator's tables (definitions: docs/metrics.md).

Every function reads the tables of :mod:`rollmux.sim.records` and nothing else, so a
metric can be checked against hand-written tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from rollmux.closedform import SECONDS_PER_HOUR

__all__ = [
    "REL_TOL",
    "SLO_READINGS",
    "admission_counts",
    "admission_shares",
    "bubble_fraction",
    "bubble_reduction",
    "bubble_reduction_pp",
    "cost_time_average_usd_per_h",
    "gpu_seconds_by_pool",
    "idle_gpu_seconds",
    "peak_gpus",
    "slo_attainment",
    "slowdown_slo_met",
    "summarize",
    "total_cost_usd",
]

#: The three SLO readings: name -> summary.json key (docs/metrics.md). ``planned``:
#: worst-case co-execution over worst-case solo (what Algorithm 1 checks); ``reference``:
#: realised over the worst-case solo estimate (the paper's reading); ``realised``: realised
#: over solo on the same draws (the reading claims take their status from).
SLO_READINGS: dict[str, str] = {
    "planned": "slo_attainment_planned",
    "reference": "slo_attainment_reference",
    "realised": "slo_attainment_realised",
}

#: Relative tolerance of SLO comparisons (the group model's).
REL_TOL = 1e-9

_ADMITTED = ("direct-packing", "rollout-scaling", "new-group", "colocated", "regroup")


def _step_widths(timeseries: pd.DataFrame) -> np.ndarray:
    """Duration each time-series row holds: t_{i+1} - t_i (0 for the last row)."""
    t = timeseries["time_s"].to_numpy(dtype=float)
    if len(t) == 0:
        return np.zeros(0)
    return np.append(np.diff(t), 0.0)


def total_cost_usd(timeseries: pd.DataFrame) -> float:
    """Total cost: the integral of the hourly price over time, sum c_i (t_{i+1} - t_i) / 3600."""
    widths = _step_widths(timeseries)
    cost = timeseries["cost_usd_per_h"].to_numpy(dtype=float)
    return float(np.dot(cost, widths) / SECONDS_PER_HOUR)


def _span_s(timeseries: pd.DataFrame) -> float:
    """Length of the replay: last time-series row minus the first."""
    if len(timeseries) == 0:
        return 0.0
    t = timeseries["time_s"].to_numpy(dtype=float)
    return float(t[-1] - t[0])


def cost_time_average_usd_per_h(timeseries: pd.DataFrame) -> float:
    """Time-average hourly cost over the replay: total cost / span (0 for an empty replay)."""
    span = _span_s(timeseries)
    return total_cost_usd(timeseries) * SECONDS_PER_HOUR / span if span > 0 else 0.0


def peak_gpus(timeseries: pd.DataFrame, gpu_types: tuple[str, ...]) -> dict[str, int]:
    """Largest number of provisioned GPUs of each type at any time."""
    out: dict[str, int] = {}
    for gpu_type in gpu_types:
        col = timeseries[f"gpus_{gpu_type}"]
        out[gpu_type] = int(col.max()) if len(col) else 0
    return out


def gpu_seconds_by_pool(timeseries: pd.DataFrame) -> dict[str, float]:
    """Provisioned GPU-seconds of each pool: integral of its GPU count over time."""
    widths = _step_widths(timeseries)
    return {
        pool: float(np.dot(timeseries[f"gpus_{pool}"].to_numpy(dtype=float), widths))
        for pool in ("rollout", "train")
    }


def bubble_fraction(jobs: pd.DataFrame, timeseries: pd.DataFrame) -> dict[str, float]:
    """Per pool: 1 - (useful GPU-seconds / provisioned GPU-seconds) (nan: pool never used)."""
    provisioned = gpu_seconds_by_pool(timeseries)
    out = {}
    for pool in ("rollout", "train"):
        busy = float(jobs[f"busy_{pool}_gpu_s"].sum()) if len(jobs) else 0.0
        out[pool] = 1.0 - busy / provisioned[pool] if provisioned[pool] > 0 else math.nan
    return out


def idle_gpu_seconds(jobs: pd.DataFrame, timeseries: pd.DataFrame) -> dict[str, float]:
    """Per pool: provisioned minus useful GPU-seconds (the dependency and skew bubbles)."""
    provisioned = gpu_seconds_by_pool(timeseries)
    return {
        pool: provisioned[pool] - (float(jobs[f"busy_{pool}_gpu_s"].sum()) if len(jobs) else 0.0)
        for pool in ("rollout", "train")
    }


def bubble_reduction(
    idle: Mapping[str, float], baseline_idle: Mapping[str, float]
) -> dict[str, float]:
    """Per pool: relative change of idle GPU-seconds versus a baseline (Solo-D), (I - I_b) / I_b."""
    return {
        pool: (idle[pool] - baseline_idle[pool]) / baseline_idle[pool]
        if baseline_idle[pool] > 0 else math.nan
        for pool in ("rollout", "train")
    }


def bubble_reduction_pp(
    bubble: Mapping[str, float], baseline_bubble: Mapping[str, float]
) -> dict[str, float]:
    """Per pool: bubble-fraction drop versus a baseline (Solo-D), b_b - b, a utilisation gain.

    In fractions (x100 for percentage points); the reading of the paper's "-24.4% / -43.1%"
    that agrees with its cost and peak-GPU numbers (docs/metrics.md, "Busy time and bubbles").
    """
    out = {}
    for pool in ("rollout", "train"):
        mine, base = bubble[pool], baseline_bubble[pool]
        out[pool] = (base - mine if mine is not None and base is not None
                     and math.isfinite(mine) and math.isfinite(base) else math.nan)
    return out


def slowdown_slo_met(slowdown: float, slo: float) -> bool:
    """A job meets its SLO when its measured slowdown is at most its SLO (relative 1e-9)."""
    return bool(math.isfinite(slowdown) and slowdown <= slo * (1.0 + REL_TOL))


def slo_attainment(jobs: pd.DataFrame, column: str = "slo_met") -> float:
    """Fraction of the trace's jobs that completed within their SLO (rejected jobs miss).

    ``column``: ``slo_met`` (the paper's reference, the worst-case solo iteration),
    ``slo_met_realised`` (the realised solo iteration under the same draws) or
    ``slo_met_planned`` (worst-case co-execution over worst-case solo, Algorithm 1's check).
    """
    return float(jobs[column].mean()) if len(jobs) else math.nan


def admission_counts(events: pd.DataFrame) -> dict[str, int]:
    """Decisions on first arrivals (not resubmissions), counted by strategy (incl. rejected)."""
    arrivals = events[events["kind"] == "arrival"]
    counts = arrivals["strategy"].value_counts()
    return {str(k): int(v) for k, v in sorted(counts.items())}


def admission_shares(counts: Mapping[str, int]) -> dict[str, float]:
    """Each admission strategy's share of admitted first arrivals (rejections excluded)."""
    admitted = {k: v for k, v in counts.items() if k in _ADMITTED}
    total = sum(admitted.values())
    return {k: v / total for k, v in sorted(admitted.items())} if total else {}


def summarize(
    jobs: pd.DataFrame,
    timeseries: pd.DataFrame,
    events: pd.DataFrame,
    gpu_types: tuple[str, ...],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The summary of one replay (the keys of summary.json; docs/metrics.md)."""
    counts = admission_counts(events)
    completed = jobs[jobs["status"] == "completed"]
    slowdowns = completed["slowdown"].to_numpy(dtype=float)
    realised = completed["slowdown_realised"].to_numpy(dtype=float)
    planned = completed["slowdown_planned"].to_numpy(dtype=float)
    reference = slo_attainment(jobs)
    out: dict[str, Any] = {
        "cost_usd_per_h": cost_time_average_usd_per_h(timeseries),
        "total_cost_usd": total_cost_usd(timeseries),
        "span_h": _span_s(timeseries) / SECONDS_PER_HOUR,
        # The three SLO readings (SLO_READINGS); ``slo_attainment`` is the reference's old name.
        "slo_attainment_planned": slo_attainment(jobs, "slo_met_planned"),
        "slo_attainment_reference": reference,
        "slo_attainment": reference,
        "slo_attainment_completed": float(completed["slo_met"].mean()) if len(completed) else
        math.nan,
        "slo_attainment_realised": slo_attainment(jobs, "slo_met_realised"),
        "peak_gpus": peak_gpus(timeseries, gpu_types),
        "peak_cost_usd_per_h": float(timeseries["cost_usd_per_h"].max()) if len(timeseries)
        else 0.0,
        "bubble_fraction": bubble_fraction(jobs, timeseries),
        "idle_gpu_h": {k: v / SECONDS_PER_HOUR for k, v in
                       idle_gpu_seconds(jobs, timeseries).items()},
        "admissions": counts,
        "admission_shares": admission_shares(counts),
        "jobs": len(jobs),
        "jobs_completed": len(completed),
        "jobs_rejected": int((jobs["status"] == "rejected").sum()),
        "mean_slowdown": float(slowdowns.mean()) if len(slowdowns) else math.nan,
        "max_slowdown": float(slowdowns.max()) if len(slowdowns) else math.nan,
        "mean_slowdown_realised": float(realised.mean()) if len(realised) else math.nan,
        "max_slowdown_realised": float(realised.max()) if len(realised) else math.nan,
        "mean_slowdown_planned": float(planned.mean()) if len(planned) else math.nan,
        "max_slowdown_planned": float(planned.max()) if len(planned) else math.nan,
    }
    if extra:
        out.update(extra)
    return _json_safe(out)


def _json_safe(value: Any) -> Any:
    """Replace nan/inf with None and numpy scalars with Python ones (valid, stable JSON)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
