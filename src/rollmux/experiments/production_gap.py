"""The production cost gap decomposed (issue 19, item 3): one documented factor at a time.

Our RollMux on the production trace (§6.4) saves less than the paper's (C01 1.84x over
Solo-D, C02 1.38x over veRL, C04 $510/h). This experiment moves our setup toward what the
paper's numbers imply, one factor at a time and cumulatively, in the order of
:data:`FACTORS` (best supported first), and records the production claims (C01, C02, C04,
C10-C13) and RollMux's realised SLO attainment after each step. No factor is fitted to a
RollMux result: the arrival re-timing is fitted to the Solo-D peak the paper states for its
trace (a fact of the trace and a baseline), the lengths are recorded data.

* :func:`burst_arrivals` / :func:`burst_to_peak`: arrivals pulled toward the start of their
  window (default a day) by a factor ``c`` (1: unchanged, 0: every job of a window arrives
  at its start), the largest ``c`` whose Solo-D concurrent peak reaches the paper's 328 GPUs
  per pool; each job's work, GPUs and SLO are unchanged, so Solo-D's and veRL's total costs
  are too.
* :func:`gap_table`: one row per step and claim, from each step's replay table (the
  production metrics of :func:`rollmux.experiments.production.production_metrics`, at
  each seed alone) and the replays' summaries (realised SLO): the mean over the step's
  seeds and its 95% Student-t interval (:func:`rollmux.experiments.intervals.t_interval`,
  the claims report's).

Definitions: docs/findings.md section 5; the factors' sources in :data:`FACTORS`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "BY_WORKLOAD_COLUMNS",
    "CLAIMS",
    "FACTORS",
    "GAP_COLUMNS",
    "LENGTHS_COLUMNS",
    "Burst",
    "Factor",
    "Step",
    "burst_arrivals",
    "burst_to_peak",
    "gap_table",
    "lengths_by_workload",
    "lengths_claims",
    "real_lengths_metrics",
    "slo_by_replay",
    "slo_readings",
    "solo_peak",
]


@dataclass(frozen=True)
class Factor:
    """One factor of the decomposition: its name, what it changes and its source."""

    name: str
    change: str
    source: str


#: The factors, best supported first (each step adds one to the previous step's setup).
FACTORS: tuple[Factor, ...] = (
    Factor("burst", "arrivals re-timed so Solo-D's concurrent peak reaches the paper's 328 "
           "GPUs per pool (ours: 240)",
           "the paper's words, §6.4: \"both veRL and Solo-D requiring 328 H800s\", \"the 328 "
           "H20s required by Solo-D\" (the re-timing rule is ours)"),
    Factor("lengths", "each iteration's response lengths drawn from real runs' recorded "
           "steps instead of the lognormal (shape 0.8, mean 0.35 of the cap)",
           "PolyTrace figures (DAPO-32B, DeepCoder-14B, Search-R1-7B; "
           "docs/stochastic.md section 7); which run serves which job is ours"),
)

#: The claims recorded after each step (the production claims whose gap is decomposed).
CLAIMS: tuple[str, ...] = ("C01", "C02", "C04", "C10", "C11", "C12", "C13")

#: Columns of :func:`gap_table`.
GAP_COLUMNS: tuple[str, ...] = (
    "step", "setup", "factor", "source", "claim", "metric", "paper", "ours", "ci_low",
    "ci_high", "seeds", "ours_over_paper", "gap_closed", "note",
)


# --------------------------------------------------------------------------- burstiness


def solo_peak(arrivals_s: np.ndarray, durations_s: np.ndarray, gpus: np.ndarray) -> float:
    """Largest number of GPUs held at one instant when every job runs alone from arrival."""
    from rollmux.traces.stats import _peak_concurrent

    return _peak_concurrent(arrivals_s, arrivals_s + durations_s, gpus)


def burst_arrivals(arrivals_s: np.ndarray, window_s: float, factor: float) -> np.ndarray:
    """Arrivals pulled toward the start of their window: ``w + factor (a - w)``.

    Windows of ``window_s`` start at the first arrival; the map is monotone, so the
    arrival order is kept.
    """
    a = np.asarray(arrivals_s, dtype=float)
    if not 0.0 <= factor <= 1.0:
        raise ValueError(f"factor must be in [0, 1], got {factor!r}")
    if not window_s > 0:
        raise ValueError(f"window_s must be > 0, got {window_s!r}")
    start = float(a.min())
    w = start + np.floor((a - start) / window_s) * window_s
    return np.asarray(w + factor * (a - w), dtype=float)


@dataclass(frozen=True)
class Burst:
    """The re-timed trace: its jobs, the factor, the window and both peaks."""

    jobs: tuple[Any, ...]
    factor: float
    window_h: float
    peak_before: float
    peak_after: float
    target: float

    @property
    def reached(self) -> bool:
        """Whether the Solo-D peak reaches the target."""
        return self.peak_after >= self.target


def burst_to_peak(jobs: Sequence[Any], hw: Any, target: float, window_h: float = 24.0,
                  grid: int = 200) -> Burst:
    """The largest factor (on a grid of ``grid`` steps, then refined) whose Solo-D peak,
    the larger of the two pools', reaches ``target``; factor 0 if none does."""
    from rollmux.traces.stats import job_frame

    frame = job_frame(list(jobs), hw)
    arrivals = frame["arrival_s"].to_numpy(dtype=float)
    durations = frame["duration_s"].to_numpy(dtype=float)
    pools = [frame[c].to_numpy(dtype=float) for c in ("rollout_gpus", "train_gpus")]
    window_s = window_h * 3600.0

    def peak(factor: float) -> float:
        moved = burst_arrivals(arrivals, window_s, factor)
        return max(solo_peak(moved, durations, g) for g in pools)

    before = peak(1.0)
    factors = np.linspace(1.0, 0.0, grid + 1)
    chosen = 0.0
    for hi, lo in itertools.pairwise(factors):
        if peak(float(lo)) >= target:
            # The boundary lies in (lo, hi]: bisect for the largest factor that reaches it.
            good, bad = float(lo), float(hi)
            if peak(bad) >= target:
                good = bad
            else:
                for _ in range(40):
                    mid = 0.5 * (good + bad)
                    good, bad = (mid, bad) if peak(mid) >= target else (good, mid)
            chosen = good
            break
    moved = burst_arrivals(arrivals, window_s, chosen)
    new_jobs = tuple(dataclasses.replace(job, arrival_s=float(t))
                     for job, t in zip(jobs, moved, strict=True))
    return Burst(new_jobs, chosen, window_h, before, peak(chosen), float(target))


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Step:
    """One step of the decomposition: its setup and the replays that measure it."""

    name: str
    setup: str
    factor: str
    source: str
    production: pd.DataFrame
    slo_realised: float
    slo_reference: float
    slo_by_seed: tuple[tuple[float, float], ...] = ()


def gap_table(steps: Sequence[Step], ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per step and claim (:data:`CLAIMS` and RollMux's realised SLO attainment).

    ``ours`` is the mean of the claim's per-seed values (each seed's replays alone, as the
    claims report's per-seed metrics), ``ci_low``/``ci_high`` its 95% Student-t interval
    over the ``seeds`` seeds (the mean itself with one seed). ``gap_closed``: (ours - the
    first step's) / (paper - the first step's), the share of the first step's distance to
    the paper a step has closed (negative: it moved away).
    """
    from rollmux.experiments.production import production_metrics

    by_id = ledger.set_index("claim_id")
    rows: list[dict[str, Any]] = []
    base: dict[str, float] = {}
    for step in steps:
        metrics = production_metrics(step.production, step.name).set_index("metric")
        seeds = sorted(set(step.production["seed"]))
        per_seed = [production_metrics(step.production[step.production["seed"] == s],
                                       step.name).set_index("metric")["value"]
                    for s in seeds]
        for claim in CLAIMS:
            metric = str(by_id.at[claim, "metric"])
            paper = float(by_id.at[claim, "paper_value"])
            spread = [float(m[metric]) for m in per_seed]
            base.setdefault(claim, float(np.mean(spread)))
            rows.append(_row(step, claim, metric, paper, spread, base[claim],
                             str(metrics.at[metric, "note"])))
        readings = step.slo_by_seed or ((step.slo_realised, step.slo_reference),)
        for k, (claim, metric, note) in enumerate((
            ("C03", "slo_attainment_realised_rollmux",
             "RollMux's jobs within their SLO, realised over solo on the same draws (%)"),
            ("C03", "slo_attainment_reference_rollmux",
             "RollMux's jobs within their SLO over the worst-case solo estimate (%)"),
        )):
            paper = float(by_id.at[claim, "paper_value"])
            spread = [r[k] for r in readings]
            base.setdefault(metric, float(np.mean(spread)))
            rows.append(_row(step, claim, metric, paper, spread, base[metric], note))
    return pd.DataFrame(rows, columns=list(GAP_COLUMNS))


def _row(step: Step, claim: str, metric: str, paper: float, spread: Sequence[float],
         base: float, note: str) -> dict[str, Any]:
    """One row of the table (``spread``: the value per seed; ours their mean)."""
    from rollmux.experiments.intervals import t_interval

    ci = t_interval(spread)
    ours = ci.mean
    span = paper - base
    closed = (ours - base) / span if abs(span) > 1e-12 else math.nan
    return {"step": step.name, "setup": step.setup, "factor": step.factor,
            "source": step.source, "claim": claim, "metric": metric, "paper": paper,
            "ours": ours, "ci_low": ci.low, "ci_high": ci.high,
            "seeds": ci.n, "ours_over_paper": ours / paper if paper else math.nan,
            "gap_closed": closed, "note": note}


def slo_readings(summaries: Mapping[str, Mapping[str, Any]]) -> tuple[float, float]:
    """RollMux's realised and reference SLO attainment (%), mean over its replays.

    ``summaries`` maps each replay folder to its summary.json and its policy (key
    ``policy``, added by the caller).
    """
    per_seed = slo_by_replay(summaries)
    return (float(np.mean([r for r, _ in per_seed])),
            float(np.mean([r for _, r in per_seed])))


def slo_by_replay(summaries: Mapping[str, Mapping[str, Any]]) -> list[tuple[float, float]]:
    """RollMux's (realised, reference) SLO attainment (%) of each of its replays."""
    mine = [summaries[k] for k in sorted(summaries) if summaries[k].get("policy") == "rollmux"]
    if not mine:
        raise ValueError("no rollmux replay among the summaries")
    return [(100.0 * float(s["slo_attainment_realised"]),
             100.0 * float(s.get("slo_attainment_reference", s.get("slo_attainment"))))
            for s in mine]


# --------------------------------------------------------------------------- lengths claims

#: Columns of :func:`lengths_claims`.
LENGTHS_COLUMNS: tuple[str, ...] = (
    "claim", "metric", "unit", "paper", "ours_lognormal", "holds_lognormal", "ours_lengths",
    "holds_lengths", "tolerance",
)


def lengths_claims(ledger: pd.DataFrame, tolerances: Mapping[str, Any],
                   lognormal: pd.DataFrame, lengths: pd.DataFrame,
                   slo: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    """The production claims of the lognormal replays beside those of the replays with
    real lengths, each compared with the paper by the claims' own rule
    (:func:`rollmux.experiments.claims.verdict.compare`).

    ``lognormal`` and ``lengths`` are production replay tables (rollmux, solo-d, verl);
    ``slo`` maps ``lognormal``/``lengths`` to RollMux's (realised, reference) attainment
    in %, compared with C03 (the realised reading is the one claims take their status from).
    """
    from rollmux.experiments.claims.verdict import compare
    from rollmux.experiments.production import production_metrics

    ours = {name: production_metrics(table, name).set_index("metric")["value"]
            for name, table in (("lognormal", lognormal), ("lengths", lengths))}
    rows = []
    extra = [("C03", "slo_attainment_realised_rollmux", 0),
             ("C03", "slo_attainment_reference_rollmux", 1)]
    entries = [(str(r["claim_id"]), str(r["metric"]), None)
               for r in ledger.to_dict("records") if str(r["metric"]) in ours["lognormal"].index]
    by_id = ledger.set_index("claim_id")
    for claim, metric, reading in entries + extra:
        rec = by_id.loc[claim]
        kind, unit = str(rec["kind"]), str(rec["unit"])
        if kind == "range":
            continue
        paper = float(rec["paper_value"])
        tol = tolerances[kind]
        row: dict[str, Any] = {"claim": claim, "metric": metric, "unit": unit, "paper": paper,
                               "tolerance": tol.describe(unit)}
        for name in ("lognormal", "lengths"):
            value = (float(ours[name][metric]) if reading is None
                     else float(slo[name][reading]))
            verdict = compare(kind, unit, (paper, None, None), (value, None, None), tol)
            row[f"ours_{name}"] = value
            row[f"holds_{name}"] = bool(verdict.holds)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(LENGTHS_COLUMNS))


def real_lengths_metrics(prod: pd.DataFrame, source: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The production claims' metrics of the replays with real lengths, as companion rows.

    ``prod``: a production replay table (rollmux, solo-d, verl; any number of seeds) whose
    replays drew response lengths from real runs. Returns (metrics, per seed): every plain
    metric of :func:`rollmux.experiments.production.production_metrics` renamed
    ``<metric>@real-lengths`` (:data:`rollmux.experiments.metrics.LENGTHS_READING`), each
    seed's replays alone in the per-seed table and their mean in the metrics
    (:func:`rollmux.experiments.intervals.mean_over_seeds`), as the production stage
    writes its own (results/metrics/real_lengths.csv and seeds/real_lengths.csv).
    """
    from rollmux.experiments.intervals import mean_over_seeds, per_seed_metrics
    from rollmux.experiments.metrics import LENGTHS_READING, split_reading, with_reading
    from rollmux.experiments.production import production_metrics

    def build(table: pd.DataFrame) -> pd.DataFrame:
        frame = production_metrics(table, source)
        frame = frame[[not split_reading(str(m))[1] for m in frame["metric"]]].copy()
        frame["metric"] = [with_reading(str(m), LENGTHS_READING) for m in frame["metric"]]
        frame["note"] = [f"real response lengths: {n}" for n in frame["note"]]
        return frame.reset_index(drop=True)

    seeds = sorted(int(s) for s in prod["seed"].unique())
    per_seed = per_seed_metrics(lambda seed: build(prod[prod["seed"] == seed]), seeds)
    return mean_over_seeds(build(prod), per_seed), per_seed


#: Columns of :func:`lengths_by_workload`.
BY_WORKLOAD_COLUMNS: tuple[str, ...] = (
    "workload", "jobs", "slo_met_realised_pct", "realised_over_worst_solo_median",
    "slowdown_realised_median",
)


def lengths_by_workload(jobs: pd.DataFrame, workload_of: Mapping[str, str]) -> pd.DataFrame:
    """RollMux's jobs with real lengths grouped by the workload that served them.

    ``jobs``: the replays' jobs tables stacked (``job_id``, ``slo_met_realised``,
    ``solo_iteration_realised_s``, ``solo_iteration_s``, ``slowdown_realised``);
    ``workload_of``: each job id's workload (:meth:`rollmux.sim.lengths.LengthSource.
    workload_for`). ``realised_over_worst_solo``: the job's realised solo iteration over
    the worst-case solo estimate admission plans with.
    """
    frame = jobs.assign(
        workload=[workload_of[str(j)] for j in jobs["job_id"]],
        ratio=jobs["solo_iteration_realised_s"] / jobs["solo_iteration_s"],
    )
    rows = []
    for name, part in frame.groupby("workload", sort=True):
        rows.append({"workload": name, "jobs": len(part),
                     "slo_met_realised_pct": 100.0 * float(part["slo_met_realised"].mean()),
                     "realised_over_worst_solo_median": float(part["ratio"].median()),
                     "slowdown_realised_median": float(part["slowdown_realised"].median())})
    return pd.DataFrame(rows, columns=list(BY_WORKLOAD_COLUMNS))
