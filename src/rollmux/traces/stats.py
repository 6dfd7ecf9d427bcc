"""Per-trace statistics, and the paper's stated values to set them beside."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

HOUR_S = 3600.0

#: What the paper states about each trace (notes §6); None where it states nothing.
PAPER_TARGETS: dict[str, dict[str, Any]] = {
    "production": {
        "jobs": 200,
        "horizon_h": 336.0,
        "span_h": 370.2,
        "model_size_min_b": 3.0,
        "model_size_max_b": 32.0,
        "max_response_min_k": 4.0,
        "max_response_max_k": 32.0,
        "mean_max_response_k": 12.1,
        "mean_duration_h": 27.9,
        "multi_turn_ratio_min": 3.0,
        "multi_turn_ratio_max": 4.0,
        "phase_min_s": 50.0,
        "phase_max_s": 900.0,
        "peak_rollout_gpus_solo": 328,
        "peak_train_gpus_solo": 328,
        "slo_min": 1.0,
        "slo_max": 2.0,
    },
    "simulation": {
        "jobs": 300,
        "horizon_h": 580.0,
        "mean_duration_h": 14.4,
        "max_duration_h": 142.9,
        "slo_min": 1.0,
        "slo_max": 2.0,
    },
    "microbench": {"jobs": 5},
}

#: Units and meanings of the statistics, for tables.
STAT_UNITS: dict[str, str] = {
    "jobs": "jobs",
    "horizon_h": "h (first to last arrival)",
    "span_h": "h (first arrival to last solo completion)",
    "model_size_min_b": "B params",
    "model_size_max_b": "B params",
    "mean_model_size_b": "B params",
    "max_response_min_k": "k tokens (k = 1024)",
    "max_response_max_k": "k tokens",
    "mean_max_response_k": "k tokens",
    "mean_duration_h": "h (iterations x solo iteration)",
    "max_duration_h": "h",
    "multi_turn_share": "fraction of jobs",
    "rollout_heavy_share": "fraction with rollout > training",
    "median_rollout_over_train": "x",
    "multi_turn_ratio_min": "x (rollout / training, multi-turn jobs)",
    "multi_turn_ratio_max": "x",
    "phase_min_s": "s (shortest expected rollout or training phase)",
    "phase_max_s": "s (longest)",
    "mean_rollout_gpus": "GPUs per job",
    "mean_train_gpus": "GPUs per job",
    "rollout_gpus_total": "GPUs (sum over jobs)",
    "train_gpus_total": "GPUs (sum over jobs)",
    "peak_rollout_gpus_solo": "GPUs (Solo-D concurrent peak)",
    "peak_train_gpus_solo": "GPUs (Solo-D concurrent peak)",
    "slo_min": "x",
    "slo_max": "x",
    "slo_mean": "x",
}


def _times(jobs: Sequence[Any], hw: Any) -> list[Any]:
    """Phase times of every job (the phase model fills what the trace leaves empty)."""
    from rollmux.model import resolve

    if hw is None:
        from rollmux.hardware import load_hardware

        hw = load_hardware()
    return [resolve(job, hw).times for job in jobs]


def job_frame(jobs: Sequence[Any], hw: Any = None) -> pd.DataFrame:
    """One row per job: identity, GPUs, phase times and solo duration (for stats and figures)."""
    times = _times(jobs, hw)
    rows = []
    for job, t in zip(jobs, times, strict=True):
        rows.append(
            {
                "job_id": job.job_id,
                "workload": job.workload,
                "model_size_b": job.model_size_b,
                "max_response_tokens": job.max_response_tokens,
                "turns": job.turns,
                "rollout_gpus": job.rollout_gpus,
                "train_gpus": job.train_gpus,
                "slo": job.slo,
                "arrival_s": job.arrival_s,
                "iterations": job.iterations,
                "rollout_s": t.rollout_s,
                "train_s": t.train_s,
                "sync_s": t.sync_s,
                "solo_iteration_s": t.solo_iteration_s,
                "duration_s": job.iterations * t.solo_iteration_s,
            }
        )
    return pd.DataFrame(rows)


def _peak_concurrent(start: np.ndarray, end: np.ndarray, demand: np.ndarray) -> float:
    """Largest summed demand of intervals [start, end) alive at one instant."""
    if start.size == 0:
        return 0.0
    times = np.concatenate([start, end])
    deltas = np.concatenate([demand, -demand])
    # At equal times, departures (negative deltas) are processed before arrivals.
    order = np.lexsort((deltas, times))
    return float(np.max(np.cumsum(deltas[order])))


def frame_summary(frame: pd.DataFrame) -> dict[str, Any]:
    """Statistics of a job_frame: sizes, lengths, durations, phase ratios, GPU demand, SLO."""
    if frame.empty:
        return {"jobs": 0}
    ratio = frame["rollout_s"] / frame["train_s"]
    multi = frame["turns"] > 1
    phases = pd.concat([frame["rollout_s"], frame["train_s"]])
    start = frame["arrival_s"].to_numpy(dtype=float)
    end = start + frame["duration_s"].to_numpy(dtype=float)
    out: dict[str, Any] = {
        "jobs": len(frame),
        "horizon_h": round(float(start.max() - start.min()) / HOUR_S, 3),
        "span_h": round(float(end.max() - start.min()) / HOUR_S, 3),
        "model_size_min_b": float(frame["model_size_b"].min()),
        "model_size_max_b": float(frame["model_size_b"].max()),
        "mean_model_size_b": round(float(frame["model_size_b"].mean()), 3),
        "max_response_min_k": round(float(frame["max_response_tokens"].min()) / 1024, 3),
        "max_response_max_k": round(float(frame["max_response_tokens"].max()) / 1024, 3),
        "mean_max_response_k": round(float(frame["max_response_tokens"].mean()) / 1024, 3),
        "mean_duration_h": round(float(frame["duration_s"].mean()) / HOUR_S, 3),
        "max_duration_h": round(float(frame["duration_s"].max()) / HOUR_S, 3),
        "multi_turn_share": round(float(multi.mean()), 3),
        "rollout_heavy_share": round(float((ratio > 1).mean()), 3),
        "median_rollout_over_train": round(float(ratio.median()), 3),
        "phase_min_s": round(float(phases.min()), 1),
        "phase_max_s": round(float(phases.max()), 1),
        "mean_rollout_gpus": round(float(frame["rollout_gpus"].mean()), 3),
        "mean_train_gpus": round(float(frame["train_gpus"].mean()), 3),
        "rollout_gpus_total": int(frame["rollout_gpus"].sum()),
        "train_gpus_total": int(frame["train_gpus"].sum()),
        "peak_rollout_gpus_solo": int(
            _peak_concurrent(start, end, frame["rollout_gpus"].to_numpy(dtype=float))
        ),
        "peak_train_gpus_solo": int(
            _peak_concurrent(start, end, frame["train_gpus"].to_numpy(dtype=float))
        ),
        "slo_min": round(float(frame["slo"].min()), 3),
        "slo_max": round(float(frame["slo"].max()), 3),
        "slo_mean": round(float(frame["slo"].mean()), 3),
    }
    if multi.any():
        out["multi_turn_ratio_min"] = round(float(ratio[multi].min()), 3)
        out["multi_turn_ratio_max"] = round(float(ratio[multi].max()), 3)
    return out


def job_summary(jobs: Sequence[Any], hw: Any = None) -> dict[str, Any]:
    """Statistics of a job list (see frame_summary)."""
    return frame_summary(job_frame(jobs, hw))


def stats_table(jobs: Sequence[Any], kind: str | None = None, hw: Any = None) -> pd.DataFrame:
    """Achieved statistics beside the paper's (columns statistic, unit, paper, achieved)."""
    achieved = job_summary(jobs, hw)
    targets = PAPER_TARGETS.get(kind or "", {})
    rows = [
        {
            "statistic": key,
            "unit": STAT_UNITS.get(key, ""),
            "paper": targets.get(key),
            "achieved": value,
        }
        for key, value in achieved.items()
    ]
    return pd.DataFrame(rows, columns=["statistic", "unit", "paper", "achieved"])


def summary_lines(path: str, jobs: Sequence[Any], hw: Any = None) -> list[str]:
    """A one-screen summary of a valid trace for `rollmux trace validate`."""
    frame = job_frame(jobs, hw)
    s = frame_summary(frame)
    if s["jobs"] == 0:
        return [f"{path}: valid, 0 jobs"]
    sizes = frame["model_size_b"].value_counts().sort_index()
    size_text = ", ".join(f"{size:g}B x{count}" for size, count in sizes.items())
    workloads = frame["workload"].replace("", "(none)").value_counts().sort_index()
    workload_text = ", ".join(f"{name} x{count}" for name, count in workloads.items())
    return [
        f"{path}: valid ({s['jobs']} jobs)",
        f"  horizon        {s['horizon_h']:.1f} h of arrivals, {s['span_h']:.1f} h to the last "
        f"solo completion; job durations mean {s['mean_duration_h']:.1f} h, max "
        f"{s['max_duration_h']:.1f} h",
        f"  model sizes    {size_text}",
        f"  max response   {s['max_response_min_k']:g}k-{s['max_response_max_k']:g}k tokens, "
        f"mean {s['mean_max_response_k']:.2f}k",
        f"  GPU demand     {s['rollout_gpus_total']} rollout + {s['train_gpus_total']} training "
        f"GPUs in total (mean {s['mean_rollout_gpus']:.2f} + {s['mean_train_gpus']:.2f} per "
        f"job); Solo-D peak {s['peak_rollout_gpus_solo']} + {s['peak_train_gpus_solo']}",
        f"  phases         {s['phase_min_s']:.0f}-{s['phase_max_s']:.0f} s; rollout/training "
        f"median {s['median_rollout_over_train']:.2f}x, rollout-heavy "
        f"{100 * s['rollout_heavy_share']:.0f}%, multi-turn {100 * s['multi_turn_share']:.0f}%",
        f"  SLO            {s['slo_min']:.2f}-{s['slo_max']:.2f} (mean {s['slo_mean']:.2f})",
        f"  workloads      {workload_text}",
    ]
