"""Two placement policies side by side on the same replays: cost, SLOs, slowdown, latency.

:func:`outcome_row` reduces one replay folder (``rollmux simulate`` output) to what the
replay decided: the cost of completing the trace, the SLO attainment (``slo_attainment``,
docs/metrics.md) and the per-job slowdown (mean, p95, max over completed jobs).
:func:`latency_row` adds the policy's decision latency, which is not in the replay's
files (they are byte-identical across runs, timings are not): :func:`decision_latencies_ms`
re-makes the replay's decisions, in the order of its event log, on the snapshots the
replay saw, and times each one (CPU time of the deciding thread, which other processes on
a shared machine inflate less than wall time). The decisions are checked against the
event log, so the timed decisions are the replay's own. So that the pipeline's outputs
stay byte-identical, it reads latencies recorded once (:func:`recorded_latency`,
benchmarks/record_beyond_latency.py) unless told to time them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "COMPARISON_COLUMNS",
    "KEY_COLUMNS",
    "LATENCY_COLUMNS",
    "decision_latencies_ms",
    "iteration_tail",
    "latency_row",
    "outcome_row",
    "recorded_latency",
]

#: Columns that identify a replay in a comparison or latency table.
KEY_COLUMNS: tuple[str, ...] = ("trace", "policy", "seed", "phases")
#: Columns of a latency table (:func:`latency_row`, one row per replay), in order.
LATENCY_COLUMNS: tuple[str, ...] = (
    *KEY_COLUMNS, "decisions", "decision_median_ms", "decision_p95_ms", "decision_max_ms",
)
#: Columns of a comparison table (one row per replay), in order.
COMPARISON_COLUMNS: tuple[str, ...] = (
    *KEY_COLUMNS, "jobs", "jobs_completed", "total_cost_usd", "cost_usd_per_h", "span_h",
    "slo_attainment", "slo_attainment_realised", "slo_attainment_planned",
    "mean_slowdown", "p95_slowdown", "max_slowdown",
    "iterations_above_slo", "jobs_above_slo",
    *LATENCY_COLUMNS[len(KEY_COLUMNS):],
)


def _replay_config(folder: Path) -> dict[str, Any]:
    """The replay's resolved ``config.json``."""
    path = folder / "config.json"
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        raise ValueError(f"{folder}: not a replay folder (no readable config.json)") from None


def decision_latencies_ms(folder: str | Path, trace: str | Path,
                          hardware_overrides: Mapping[str, Any] | None = None) -> np.ndarray:
    """CPU milliseconds of each placement decision of the replay in ``folder``.

    ``trace``: the replayed trace file. The jobs, SLO setting and policy options are
    rebuilt from the folder's ``config.json`` as :func:`rollmux.sim.run_replay` builds
    them; arrivals are placed and completions released in the order of ``events.csv``.
    ValueError when the log holds events this re-play cannot follow (kills, regroupings)
    or a re-made decision differs from the logged one (naming the job).
    """
    from rollmux.hardware import load_hardware
    from rollmux.placement.base import Placement, Strategy
    from rollmux.placement.snapshot import apply, empty_snapshot, release
    from rollmux.sim.engine import build_policy
    from rollmux.sim.replay import override_slos, parse_slo
    from rollmux.traces.loader import load_trace

    folder = Path(folder)
    config = _replay_config(folder)
    hw = load_hardware(config.get("hardware_file"), dict(hardware_overrides or {}) or None)
    jobs = {job.job_id: job for job in override_slos(
        load_trace(str(trace), hw), parse_slo(config.get("slo_override") or "trace"),
        int(config["seed"]))}
    policy = build_policy(str(config["policy"]), int(config["seed"]),
                          dict(config.get("policy_options") or {}))
    events = pd.read_csv(folder / "events.csv", keep_default_na=False)
    snapshot = empty_snapshot(hw)
    out: list[float] = []
    for row in events.itertuples(index=False):
        t = float(row.time_s)
        if row.kind == "complete":
            snapshot = release(dataclasses.replace(snapshot, time_s=t), str(row.job_id))
            continue
        if row.kind != "arrival":
            raise ValueError(f"{folder / 'events.csv'}: event {row.kind!r} of job "
                             f"{row.job_id}: only arrivals and completions can be re-played")
        snap = dataclasses.replace(snapshot, time_s=t)
        start = time.thread_time()
        decision = policy.place(jobs[str(row.job_id)], snap)
        out.append((time.thread_time() - start) * 1e3)
        if not isinstance(decision, Placement):
            raise ValueError(f"{folder}: job {row.job_id}: the policy regrouped; only "
                             f"single placements can be re-played")
        logged = (str(row.strategy), str(row.group_id))
        made = (decision.strategy.value,
                "" if decision.strategy is Strategy.REJECTED else decision.group_id)
        if made != logged:
            raise ValueError(f"{folder}: job {row.job_id}: the re-made decision {made} differs "
                             f"from the replay's {logged}")
        snapshot = apply(snap, decision)
    return np.asarray(out, dtype=float)


def _keys(folder: Path, trace: str | Path, config: Mapping[str, Any]) -> dict[str, Any]:
    """The replay's :data:`KEY_COLUMNS` (``trace``: the file stem)."""
    return {"trace": Path(trace).stem, "policy": config["policy"], "seed": int(config["seed"]),
            "phases": "stochastic" if config.get("stochastic", True) else "expected"}


def iteration_tail(phases: pd.DataFrame, jobs: pd.DataFrame) -> tuple[int, int]:
    """Iterations longer than ``SLO x T_solo`` and the jobs with any: ``(iterations, jobs)``.

    ``phases``: a replay's ``phases.csv`` (:data:`rollmux.sim.records.PHASE_RECORD_COLUMNS`,
    phase 0 rollout, 1 training); ``jobs``: its ``jobs.csv``. Iteration ``i`` of a job lasts
    from the start of its rollout ``i`` to the start of rollout ``i + 1`` (the last: to the
    end of its training), its waits included; ``T_solo`` is the job's
    ``solo_iteration_s`` (the worst-case solo estimate, the plan's and the paper
    reference's denominator).
    """
    work = phases[phases["phase"].isin((0, 1))]
    starts = work[work["phase"] == 0].groupby(["job", "iteration"])["start_s"].min()
    ends = work[work["phase"] == 1].groupby(["job", "iteration"])["end_s"].max()
    limit = (jobs.set_index("job")["slo"] * jobs.set_index("job")["solo_iteration_s"])
    n_iter, n_jobs = 0, 0
    for job, first in starts.groupby(level=0):
        t0 = first.to_numpy(dtype=float)
        last_end = ends.get((job, int(first.index[-1][1])), np.nan)
        lengths = np.append(np.diff(t0), float(last_end) - t0[-1])
        above = int(np.sum(lengths > float(limit.get(job, np.inf)) * (1.0 + 1e-9)))
        n_iter += above
        n_jobs += int(above > 0)
    return n_iter, n_jobs


def outcome_row(folder: str | Path, trace: str | Path) -> dict[str, Any]:
    """What the replay in ``folder`` decided, as the non-latency columns of
    :data:`COMPARISON_COLUMNS` (``trace``: the replayed file; its stem is the key).

    The three SLO readings (``slo_attainment`` the paper reference, ``_realised``,
    ``_planned``; NaN where the summary has none) and the per-iteration tail: the
    summary's ``iterations_above_slo``/``jobs_above_slo`` (counted by the event model as
    the replay runs), else :func:`iteration_tail` of the folder's ``phases.csv``, else
    NaN."""
    folder = Path(folder)
    config = _replay_config(folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    jobs = pd.read_csv(folder / "jobs.csv")
    slowdown = jobs.loc[jobs.status == "completed", "slowdown"].to_numpy(dtype=float)
    nan = float("nan")

    def number(key: str) -> float:
        value = summary.get(key)
        return nan if value is None else float(value)

    phases = folder / "phases.csv"
    tail = (number("iterations_above_slo"), number("jobs_above_slo"))
    if not np.isfinite(tail).all() and phases.is_file():
        tail = tuple(float(x) for x in iteration_tail(pd.read_csv(phases), jobs))  # type: ignore[assignment]
    return {
        **_keys(folder, trace, config),
        "jobs": int(summary["jobs"]),
        "jobs_completed": int(summary["jobs_completed"]),
        "total_cost_usd": float(summary["total_cost_usd"]),
        "cost_usd_per_h": float(summary["cost_usd_per_h"]),
        "span_h": float(summary["span_h"]),
        "slo_attainment": float(summary["slo_attainment"]),
        "slo_attainment_realised": number("slo_attainment_realised"),
        "slo_attainment_planned": number("slo_attainment_planned"),
        "mean_slowdown": float(np.mean(slowdown)) if len(slowdown) else nan,
        "p95_slowdown": float(np.percentile(slowdown, 95)) if len(slowdown) else nan,
        "max_slowdown": float(np.max(slowdown)) if len(slowdown) else nan,
        **dict(zip(("iterations_above_slo", "jobs_above_slo"), tail, strict=True)),
    }


def latency_row(folder: str | Path, trace: str | Path,
                hardware_overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The replay's decision latency (:data:`LATENCY_COLUMNS`), timed now
    (:func:`decision_latencies_ms`)."""
    folder = Path(folder)
    latency = decision_latencies_ms(folder, trace, hardware_overrides)
    nan = float("nan")
    return {
        **_keys(folder, trace, _replay_config(folder)),
        "decisions": len(latency),
        "decision_median_ms": float(np.median(latency)) if len(latency) else nan,
        "decision_p95_ms": float(np.percentile(latency, 95)) if len(latency) else nan,
        "decision_max_ms": float(np.max(latency)) if len(latency) else nan,
    }


def recorded_latency(path: str | Path, keys: Mapping[str, Any]) -> dict[str, Any]:
    """The row of a recorded latency table (:data:`LATENCY_COLUMNS`) for one replay.

    ``keys``: the replay's :data:`KEY_COLUMNS`. ValueError naming the file and the keys
    when the table has no such row, or more than one.
    """
    table = pd.read_csv(path, dtype={"trace": str, "policy": str, "phases": str})
    if tuple(table.columns) != LATENCY_COLUMNS:
        raise ValueError(f"{path}:1: header {','.join(table.columns)} must be exactly "
                         f"{','.join(LATENCY_COLUMNS)}")
    match = table
    for key in KEY_COLUMNS:
        match = match[match[key] == keys[key]]
    if len(match) != 1:
        wanted = ", ".join(f"{k}={keys[k]}" for k in KEY_COLUMNS)
        raise ValueError(f"{path}: {len(match)} rows for {wanted} (expected one; record it "
                         f"with benchmarks/record_beyond_latency.py)")
    row = match.iloc[0]
    return {**{k: keys[k] for k in KEY_COLUMNS}, "decisions": int(row["decisions"]),
            **{c: float(row[c]) for c in LATENCY_COLUMNS[len(KEY_COLUMNS) + 1:]}}


