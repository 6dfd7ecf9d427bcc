"""Evidence for C38: which jobs miss their SLO under RollMux in the simulation sweeps, and why.

The paper's admission (sec. 4.2, Algorithm 1) accepts a placement when every member's
co-execution iteration time, "simulating one meta-iteration" of the group with worst-case
(T_solo) phases, stays within its SLO. That bounds the group's steady-state period; a
job's slowdown (docs/metrics.md) is its running time over its iterations, so it also
counts the wait for its first slot and every transient of its group. For each job that
misses, :func:`slo_misses` reads its per-iteration times from the replay's phase table
and splits its excess over the SLO bound into the first iteration (admission to its first
training end) and the later ones.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rollmux.sim.records import PHASE_CODES
from rollmux.sim.replay import ReplaySpec, replay_keys, run_replay

__all__ = ["SLO_MISS_COLUMNS", "concat_misses", "replay_misses", "slo_misses"]

#: Columns of results/evidence/rollmux_slo_misses.csv (docs/metrics.md, "Evidence").
SLO_MISS_COLUMNS = (
    "claim", "trace", "slo_setting", "maxgroup", "seed", "job_id", "group_id", "strategy",
    "slo", "iterations", "solo_iteration_s", "slo_bound_s", "first_slot_wait_s",
    "first_iteration_s", "iteration_after_admission_s", "iteration_at_completion_s",
    "max_later_iteration_s", "achieved_iteration_s", "slowdown", "excess_s",
    "later_iterations_within_bound", "cause",
)

_TOL = 1e-9


def _cause(first_excess_s: float, later_within: bool, after_s: float, last_s: float,
           bound_s: float) -> str:
    """Which part of a missing job's run takes it over its SLO bound."""
    if after_s > bound_s * (1 + _TOL) or last_s > bound_s * (1 + _TOL):
        return "period above the SLO bound"
    if later_within and first_excess_s > 0:
        return "first-slot wait (steady period within the bound)"
    return "transients after admission"


def slo_misses(jobs: pd.DataFrame, phases: pd.DataFrame, keys: dict[str, object],
               claim: str = "C38") -> pd.DataFrame:
    """One row per completed job of one replay that misses its SLO (``keys``: the replay's
    trace, slo, maxgroup, seed), from its jobs table and per-phase table.

    ``slo_bound_s`` = SLO x T_solo; ``first_slot_wait_s``: admission to the job's first
    phase start; ``first_iteration_s``: admission to its first training end;
    ``iteration_after_admission_s`` / ``iteration_at_completion_s``: its second and last
    iterations (training end to training end), the group's period as it joined and as it
    left; ``excess_s`` = running time - iterations x bound; ``later_iterations_within_bound``:
    whether the iterations after the first together stay within the bound.
    """
    missing = jobs[(jobs["status"] == "completed") & ~jobs["slo_met"].astype(bool)]
    rows: list[dict[str, object]] = []
    train = phases[phases["phase"] == PHASE_CODES["train"]]
    for job in missing.itertuples(index=False):
        mine = phases[phases["job"] == job.job]
        ends = train[train["job"] == job.job].groupby("iteration")["end_s"].max().sort_index()
        if ends.empty or mine.empty:
            raise ValueError(f"job {job.job_id}: no phases in the replay's phase table")
        bound_s = float(job.slo) * float(job.solo_iteration_s)
        done = int(job.iterations_done)
        first_s = float(ends.iloc[0]) - float(job.admitted_s)
        gaps = ends.diff().dropna()
        later_s = float(job.running_s) - first_s
        later_within = done <= 1 or later_s <= (done - 1) * bound_s * (1 + _TOL)
        after_s = float(gaps.iloc[0]) if len(gaps) else math.nan
        last_s = float(gaps.iloc[-1]) if len(gaps) else math.nan
        rows.append({
            "claim": claim,
            "trace": keys["trace"],
            "slo_setting": keys["slo"],
            "maxgroup": keys["maxgroup"],
            "seed": keys["seed"],
            "job_id": job.job_id,
            "group_id": job.group_id,
            "strategy": job.strategy,
            "slo": float(job.slo),
            "iterations": done,
            "solo_iteration_s": float(job.solo_iteration_s),
            "slo_bound_s": bound_s,
            "first_slot_wait_s": float(mine["start_s"].min()) - float(job.admitted_s),
            "first_iteration_s": first_s,
            "iteration_after_admission_s": after_s,
            "iteration_at_completion_s": last_s,
            "max_later_iteration_s": float(gaps.max()) if len(gaps) else math.nan,
            "achieved_iteration_s": float(job.achieved_iteration_s),
            "slowdown": float(job.slowdown),
            "excess_s": float(job.running_s) - done * bound_s,
            "later_iterations_within_bound": bool(later_within),
            "cause": _cause(first_s - bound_s, later_within, after_s, last_s, bound_s),
        })
    return pd.DataFrame(rows, columns=list(SLO_MISS_COLUMNS))


def concat_misses(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The misses of several replays in one table (the columns even when none miss)."""
    frames = [t for t in tables if len(t)]
    if not frames:
        return pd.DataFrame(columns=list(SLO_MISS_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["trace", "slo_setting", "maxgroup", "seed", "job_id"],
                           kind="stable").reset_index(drop=True)


def replay_misses(folder: str | Path, overrides: Mapping[str, Any] | None = None,
                  claim: str = "C38") -> pd.DataFrame:
    """:func:`slo_misses` of the replay in ``folder`` (its ``config.json`` and ``jobs.csv``).

    A replay with misses is run again from its configuration with the per-phase table
    kept (the sweeps do not keep it); the re-run must give the same per-job slowdowns
    (replays are deterministic), else ValueError.
    """
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    keys = replay_keys(config)
    jobs = pd.read_csv(folder / "jobs.csv", keep_default_na=False,
                       dtype={"job_id": str, "group_id": str, "strategy": str})
    jobs["slo_met"] = jobs["slo_met"].astype(str) == "True"
    if not ((jobs["status"] == "completed") & ~jobs["slo_met"]).any():
        return pd.DataFrame(columns=list(SLO_MISS_COLUMNS))
    spec = dataclasses.replace(ReplaySpec.from_config(config, record_phases=True),
                               hardware_overrides=tuple(dict(overrides or {}).items()))
    result = run_replay(spec)
    again = result.jobs.set_index("job_id")["slowdown"]
    before = pd.to_numeric(jobs.set_index("job_id")["slowdown"], errors="coerce")
    if not again.reindex(before.index).fillna(-1.0).round(9).equals(
            before.fillna(-1.0).round(9)):
        raise ValueError(f"{folder}: the re-run with phases does not reproduce jobs.csv")
    return slo_misses(result.jobs, result.phases, keys, claim)
