"""What it would take (issue 19 item 5): the model input at which a claim gives the paper's value.

A claim reproduced near the edge of its tolerance may agree for the wrong reason. For the
claims of the simulation stage (§6.5, Fig. 15, 20) and Fig. 12's migration gain (§6.3),
this module finds, by a one-dimensional search over one model input with everything else
held, the value of that input at which our metric gives the paper's number, and feeds it
back through the metric's own code (:func:`rollmux.experiments.sensitivity.
simulation_metrics`, :func:`rollmux.experiments.microbench_sim.migration_table`'s pairs),
so the ``fed_back`` column shows the paper's value reached:

* SLO attainment claims (``slo_*``, status reading realised): ``slo_scale``, the multiplier
  on every job's SLO at which the reading reaches the paper's value, each replay's
  schedule held (the replays' ``jobs.csv``: a job meets a scaled SLO when its realised
  slowdown is at most ``scale x SLO``, rejected jobs never). Attainment is a step function
  of the scale that rises at each job's slowdown over its SLO, so the search is exact: the
  smallest such breakpoint at which the reading reaches the paper's value (bisection over
  the sorted breakpoints; the reading is monotone in the scale); ``fed_back`` is the
  reading there and the note gives it just below. Random and Greedy never read SLOs, so for
  them a replay at the scaled SLOs has the same schedule; RollMux admits against SLOs, so
  for it the scale is a reading of its schedule, not a replay.
* Cost-over-optimal claims (``cost_over_opt_*``): ``h800_over_h20_price``, the H800 price
  over the H20 price (H20's held; ours 2.85, the paper's Table 1 ratio) at which the
  metric gives the paper's value, every replay's provisioned GPU-hours re-priced (schedules
  held: re-priced, not re-planned), found by :func:`scipy.optimize.brentq` over the closed
  form; NaN where no ratio in :data:`PRICE_BRACKET` gives it.
* Fig. 10's gains (``throughput_ratio_*``, C14-C22): ``h800_over_h20_price`` again, each
  system's simulated throughput per USD/h re-priced from its H20 and H800 GPUs (the
  micro-benchmark tables of every seed, mean over seeds as the claims take it), by
  :func:`scipy.optimize.brentq`; NaN where no ratio in :data:`PRICE_BRACKET` gives it.
* Fig. 12's migration gain (``migration_speedup``, each end): ``train_time_multiplier``,
  the factor on every micro-benchmark job type's training time (expected and worst case)
  at which the end (min or max over the pairs, mean over the seeds) reaches the paper's,
  by :func:`scipy.optimize.brentq` over replays of the pairs (NaN where
  :data:`TRAIN_BRACKET` holds no root).

Columns: :data:`NEAR_EDGE_COLUMNS` (the claims report's what-it-would-take columns,
:data:`rollmux.experiments.claims.verdict.WIT_COLUMNS`, and more). Definitions:
docs/metrics.md, "What it would take".
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from rollmux.experiments.metrics import (
    ATTAINMENT_METRICS,
    METRICS,
    STATUS_READING,
)

__all__ = [
    "NEAR_EDGE_COLUMNS",
    "PRICE_BRACKET",
    "TRAIN_BRACKET",
    "BuildSome",
    "ReplayJobs",
    "attainment_at",
    "gain_price_rows",
    "gains_at",
    "migration_ends",
    "migration_rows",
    "price_rows",
    "read_replays",
    "reprice",
    "rescore_attainment",
    "slo_scale_rows",
    "smallest_reaching",
]

#: Columns of the table (results/evidence/what_it_would_take.csv).
NEAR_EDGE_COLUMNS: tuple[str, ...] = (
    "claim_id", "metric", "end", "quantity", "unit", "paper", "ours_value", "ours",
    "needed", "fed_back", "note",
)
#: Price ratios (H800 over H20) searched for the cost claims.
PRICE_BRACKET: tuple[float, float] = (0.05, 100.0)
#: Multipliers on the training times searched for the migration gain.
TRAIN_BRACKET: tuple[float, float] = (0.05, 4.0)
# A job meets its SLO when its slowdown is at most its SLO (relative 1e-9), as
# rollmux.sim.metrics.slowdown_slo_met reads it.
_REL_TOL = 1e-9
_KEYS = ("trace", "slo", "maxgroup", "policy")


def _norm(value: Any) -> str:
    """A key value as text, numbers in their shortest form (``2.0``, ``"2"`` -> ``2``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


@dataclasses.dataclass(frozen=True)
class ReplayJobs:
    """One replay's jobs as the readings need them: each job's realised slowdown over its
    SLO (``inf`` for a job that did not complete), sorted, and its GPU-hours per type."""

    keys: tuple[Any, ...]
    seed: int | None  # None: the replay does not use its seed (one run for every seed)
    ratios: np.ndarray
    gpu_h: Mapping[str, float]


def attainment_at(ratios: np.ndarray, scale: float) -> float:
    """Share of jobs within ``scale`` x their SLO, from sorted slowdown-over-SLO ratios."""
    if not len(ratios):
        return math.nan
    met = np.searchsorted(ratios, scale * (1.0 + _REL_TOL), side="right")
    return float(met) / len(ratios)


def read_replays(folders: Sequence[str | Path], gpu_types: Sequence[str] = ("H20", "H800")
                 ) -> dict[tuple[Any, ...], ReplayJobs]:
    """Each replay folder's :class:`ReplayJobs`, keyed by its run keys and seed (a replay
    whose seed does not matter under seed ``None``)."""
    from rollmux.experiments.designs import gpu_hours
    from rollmux.sim.sweeps import config_uses_seed, run_keys

    out: dict[tuple[Any, ...], ReplayJobs] = {}
    for folder in folders:
        folder = Path(folder)
        keys = run_keys(folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        seed = int(keys["seed"]) if config_uses_seed(config) else None
        jobs = pd.read_csv(folder / "jobs.csv")
        done = jobs["status"] == "completed"
        slowdown = pd.to_numeric(jobs["slowdown_realised"], errors="coerce").to_numpy(float)
        slo = jobs["slo"].to_numpy(dtype=float)
        ratios = np.where(done.to_numpy() & np.isfinite(slowdown), slowdown / slo, np.inf)
        hours = gpu_hours(pd.read_csv(folder / "timeseries.csv"), list(gpu_types))
        key = tuple(_norm(keys[k]) for k in _KEYS)
        if (*key, seed) in out:
            raise ValueError(f"{folder}: a second replay of {dict(zip(_KEYS, key, strict=True))}"
                             f" at seed {seed}")
        out[(*key, seed)] = ReplayJobs(key, seed, np.sort(ratios), hours)
    return out


def _replay(replays: Mapping[tuple[Any, ...], ReplayJobs], rec: Mapping[str, Any]
            ) -> ReplayJobs:
    """The replay behind a table row (its seed's, or the one run for every seed)."""
    key = tuple(_norm(rec[k]) for k in _KEYS)
    for seed in (int(rec["seed"]), None):
        if (*key, seed) in replays:
            return replays[(*key, seed)]
    raise ValueError(f"no replay folder for {dict(zip(_KEYS, key, strict=True))} at seed "
                     f"{rec['seed']}")


def rescore_attainment(table: pd.DataFrame, replays: Mapping[tuple[Any, ...], ReplayJobs],
                       scale: float) -> pd.DataFrame:
    """``table`` (rows of replays) with its realised SLO attainment at ``scale`` x each
    job's SLO."""
    out = table.copy()
    out["slo_attainment_realised"] = [attainment_at(_replay(replays, rec).ratios, scale)
                                      for rec in table.to_dict("records")]
    return out


def reprice(table: pd.DataFrame, replays: Mapping[tuple[Any, ...], ReplayJobs],
            h20_price: float, ratio: float, reference: str = "optimal") -> pd.DataFrame:
    """``table`` (sensitivity rows) with every replay's total cost at H800 price
    ``ratio`` x ``h20_price`` and its total cost over the reference's (same setting and
    seed) recomputed."""
    out = table.copy()
    cost = [h20_price * (r.gpu_h.get("H20", 0.0) + ratio * r.gpu_h.get("H800", 0.0))
            for r in (_replay(replays, rec) for rec in table.to_dict("records"))]
    out["total_cost_usd"] = cost
    setting = ["trace", "slo", "maxgroup", "seed"]
    ref = out[out["policy"] == reference].set_index(setting)["total_cost_usd"]
    ref = ref[~ref.index.duplicated()]
    out["total_cost_over_optimal"] = [
        c / float(ref.loc[tuple(rec[k] for k in setting)])
        for c, rec in zip(cost, out.to_dict("records"), strict=True)]
    return out


def _ends(frame: pd.DataFrame, metric: str) -> dict[str, float]:
    """A metric's value, or its low and high, from a metrics frame."""
    rec = frame.set_index("metric").loc[metric]
    out = {}
    for end in ("value", "low", "high"):
        text = rec[end]
        if text not in ("", None) and not (isinstance(text, float) and math.isnan(text)):
            out[end] = float(text)
    return out


def smallest_reaching(reading: Callable[[float], float], breakpoints: np.ndarray,
                      target: float) -> tuple[float, float, float]:
    """The smallest breakpoint at which a non-decreasing step ``reading`` reaches
    ``target`` (bisection over the sorted ``breakpoints``): (breakpoint, reading there,
    reading just below it). NaNs when even the largest does not reach it."""
    points = np.unique(breakpoints[np.isfinite(breakpoints)])
    if not len(points) or reading(float(points[-1])) < target - 1e-9:
        return math.nan, math.nan, math.nan
    lo, hi = -1, len(points) - 1  # reading(points[hi]) reaches; points[lo] (if any) not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reading(float(points[mid])) >= target - 1e-9:
            hi = mid
        else:
            lo = mid
    at = float(points[hi])
    below = reading(float(points[lo])) if lo >= 0 else reading(at * (1.0 - 1e-6))
    return at, reading(at), below


def _paper_ends(ledger: pd.DataFrame) -> dict[str, tuple[str, str, dict[str, float]]]:
    """metric -> (claim id, unit, the paper's value or low and high)."""
    out = {}
    for rec in ledger.to_dict("records"):
        ends = {}
        for end, column in (("value", "paper_value"), ("low", "paper_low"),
                            ("high", "paper_high")):
            text = str(rec.get(column, "")).strip()
            if text and text.lower() != "nan":
                ends[end] = float(text)
        out[str(rec["metric"])] = (str(rec["claim_id"]), str(rec["unit"]), ends)
    return out


def _claim_targets(base: pd.DataFrame,
                   paper: Mapping[str, tuple[str, str, dict[str, float]]],
                   keep: Callable[[str], bool]
                   ) -> Iterator[tuple[str, str, str, float, float]]:
    """(claim id, metric, end, the paper's value there, ours there) for each metric of
    ``base`` that the ledger states and ``keep`` accepts, at every end both give."""
    for metric in base["metric"]:
        if metric not in paper or not keep(metric):
            continue
        claim, _, ends = paper[metric]
        ours = _ends(base, metric)
        for end, target in ends.items():
            if end in ours:
                yield claim, metric, end, target, ours[end]


def _row(claim: str, metric: str, end: str, quantity: str, unit: str, paper: float,
         ours_value: float, ours: float, needed: float, fed_back: float, note: str
         ) -> dict[str, Any]:
    """One row of the table (a range's end named in the quantity)."""
    if end != "value":
        quantity = f"{quantity} ({end} end)"
    return {"claim_id": claim, "metric": metric, "end": end, "quantity": quantity,
            "unit": unit, "paper": paper, "ours_value": ours_value, "ours": ours,
            "needed": needed, "fed_back": fed_back, "note": note}


#: ``build_some(sens, mixed, metrics)``: the rows of ``metrics`` only of what ``build``
#: gives on the same tables, each with ``build``'s values (e.g. :func:`rollmux.
#: experiments.sensitivity.simulation_metrics_over_seeds` with ``metrics``).
BuildSome = Callable[[pd.DataFrame, pd.DataFrame, Sequence[str]], pd.DataFrame]


def slo_scale_rows(ledger: pd.DataFrame, build: Callable[[pd.DataFrame, pd.DataFrame],
                   pd.DataFrame], sens: pd.DataFrame, mixed: pd.DataFrame,
                   replays: Mapping[tuple[Any, ...], ReplayJobs],
                   build_some: BuildSome | None = None) -> list[dict[str, Any]]:
    """The SLO scale each simulation attainment claim needs (module docstring).

    ``build(sens, mixed)`` gives the simulation metrics (:func:`rollmux.experiments.
    sensitivity.simulation_metrics` with the pipeline's arguments); ``sens`` and ``mixed``
    are the pipeline's tables, ``replays`` their replays (:func:`read_replays`).
    ``build_some`` (:data:`BuildSome`), when given, computes the one metric each step of
    a search reads, instead of every metric: the same values, so the same rows.
    """
    paper = _paper_ends(ledger)
    ratios = np.concatenate([r.ratios for r in replays.values()] or [np.array([])])
    tables: dict[float, tuple[pd.DataFrame, pd.DataFrame]] = {}
    cache: dict[tuple[float, str], pd.DataFrame] = {}

    def metrics_at(scale: float, metric: str) -> pd.DataFrame:
        key = (scale, metric if build_some is not None else "")
        if key not in cache:
            if scale not in tables:
                tables[scale] = (rescore_attainment(sens, replays, scale),
                                 rescore_attainment(mixed, replays, scale))
            cache[key] = (build(*tables[scale]) if build_some is None
                          else build_some(*tables[scale], (metric,)))
        return cache[key]

    rows = []
    for claim, metric, end, target, ours in _claim_targets(
            build(sens, mixed), paper, lambda m: m in ATTAINMENT_METRICS):

        def reading(scale: float, m: str = metric, e: str = end) -> float:
            return _ends(metrics_at(scale, m), m)[e]

        needed, fed, below = smallest_reaching(reading, ratios, target)
        rows.append(_row(
            claim, metric, end, "slo_scale", "x", target, ours, 1.0, needed, fed,
            f"multiplier on every job's SLO at which the {STATUS_READING} reading "
            f"({end}) reaches the paper's {target:g}%: {fed:.4g}% there, {below:.4g}% "
            "just below; each replay's schedule held (Random and Greedy never read "
            "SLOs; RollMux's admission would see the scaled SLOs)"
            if math.isfinite(needed) else
            f"no SLO scale brings the {STATUS_READING} reading ({end}) to the paper's "
            f"{target:g}% (jobs that did not complete never meet an SLO)"))
    return rows


def price_rows(ledger: pd.DataFrame, build: Callable[[pd.DataFrame, pd.DataFrame],
               pd.DataFrame], sens: pd.DataFrame, mixed: pd.DataFrame,
               replays: Mapping[tuple[Any, ...], ReplayJobs], h20_price: float,
               ours_ratio: float, reference: str = "optimal",
               build_some: BuildSome | None = None) -> list[dict[str, Any]]:
    """The H800/H20 price ratio each simulation cost-over-optimal claim needs
    (``build_some`` as in :func:`slo_scale_rows`)."""
    paper = _paper_ends(ledger)

    def metrics_at(ratio: float, metric: str) -> pd.DataFrame:
        s = reprice(sens, replays, h20_price, ratio, reference)
        m = reprice(mixed, replays, h20_price, ratio, reference)
        return build(s, m) if build_some is None else build_some(s, m, (metric,))

    def simulation_cost_over_optimum(metric: str) -> bool:
        return metric.startswith("cost_over_opt_") and METRICS[metric].stage == "simulation"

    rows = []
    for claim, metric, end, target, ours in _claim_targets(
            build(sens, mixed), paper, simulation_cost_over_optimum):

        def gap(ratio: float, m: str = metric, e: str = end, t: float = target) -> float:
            return _ends(metrics_at(ratio, m), m)[e] - t

        lo, hi = PRICE_BRACKET
        f_lo, f_hi = gap(lo), gap(hi)
        if f_lo * f_hi > 0:
            needed = fed = math.nan
            note = (f"no H800/H20 price ratio in [{lo:g}, {hi:g}] gives the paper's "
                    f"{target:g} ({end}): {f_lo + target:.4g} at {lo:g}, "
                    f"{f_hi + target:.4g} at {hi:g}")
        else:
            needed = float(brentq(gap, lo, hi, xtol=1e-9, rtol=1e-12))
            fed = gap(needed) + target
            note = (f"H800 price over H20's at which the total cost over the optimum's "
                    f"({end}) is the paper's {target:g} (H20 held at {h20_price:g} "
                    "USD/h per GPU; every replay's GPU-hours re-priced, schedules held)")
        rows.append(_row(claim, metric, end, "h800_over_h20_price", "x", target,
                         ours, ours_ratio, needed, fed, note))
    return rows


def gains_at(tables: Sequence[pd.DataFrame], ratio: float) -> dict[str, float]:
    """Each Fig. 10 gain (metric ``throughput_ratio_<scenario>_<base>``) at H800 price
    ``ratio`` x H20's, mean over the seeds' throughput tables (columns ``scenario``,
    ``system``, ``h20_gpus``, ``h800_gpus``, ``normalised_throughput``, ``available``)."""
    short = {"solo-d": "solod", "gavel-plus": "gavel", "verl": "verl"}
    per_seed: dict[str, list[float]] = {}
    for table in tables:
        rows = table[table["available"].astype(str) == "True"].copy()
        rows["per_usd"] = rows["normalised_throughput"] / (
            rows["h20_gpus"] + ratio * rows["h800_gpus"])
        for scenario, part in rows.groupby("scenario", sort=True):
            by = part.set_index("system")["per_usd"]
            if "rollmux" not in by.index:
                continue
            for system, name in short.items():
                if system in by.index:
                    per_seed.setdefault(f"throughput_ratio_{scenario}_{name}", []).append(
                        float(by["rollmux"] / by[system]))
    return {m: float(np.mean(v)) for m, v in per_seed.items()}


def gain_price_rows(ledger: pd.DataFrame, tables: Sequence[pd.DataFrame], ours_ratio: float
                    ) -> list[dict[str, Any]]:
    """The H800/H20 price ratio at which each Fig. 10 gain is the paper's (module
    docstring); ``tables``: the throughput table of every seed."""
    paper = _paper_ends(ledger)
    ours = gains_at(tables, ours_ratio)
    rows = []
    lo, hi = PRICE_BRACKET
    for metric in sorted(ours):
        if metric not in paper or "value" not in paper[metric][2]:
            continue
        claim, _, ends = paper[metric]
        target = ends["value"]

        def gap(ratio: float, m: str = metric, t: float = target) -> float:
            return gains_at(tables, ratio)[m] - t

        f_lo, f_hi = gap(lo), gap(hi)
        if f_lo * f_hi > 0:
            needed = fed = math.nan
            note = (f"no H800/H20 price ratio in [{lo:g}, {hi:g}] gives the paper's "
                    f"{target:g}: {f_lo + target:.4g} at {lo:g}, {f_hi + target:.4g} at {hi:g}")
        else:
            needed = float(brentq(gap, lo, hi, xtol=1e-9, rtol=1e-12))
            fed = gap(needed) + target
            note = ("H800 price over H20's at which RollMux's simulated throughput per USD/h "
                    "over the baseline's is the paper's (each system's GPUs re-priced, "
                    "mean over seeds)")
        rows.append(_row(claim, metric, "value", "h800_over_h20_price", "x", target,
                         ours[metric], ours_ratio, needed, fed, note))
    return rows


def migration_ends(multiplier: float, seeds: Sequence[int], iterations: int, hw: Any,
                   pairs: Sequence[Sequence[str]] | None = None) -> dict[str, float]:
    """Fig. 12's gain, min and max over the pairs (mean over ``seeds``), with every job
    type's training time (expected and worst case) times ``multiplier``."""
    from rollmux.experiments.microbench_sim import DEFAULT_PAIRS
    from rollmux.jobtypes import job_type, load_microbench
    from rollmux.model import resolve
    from rollmux.sim.stochastic import migration_speedup

    data = load_microbench()
    lows, highs = [], []
    for seed in seeds:
        gains = []
        for names in (pairs or DEFAULT_PAIRS):
            jobs = []
            for i, t in enumerate(names):
                r = resolve(job_type(t, data, job_id=f"{t}{i}"), hw)
                times = dataclasses.replace(r.times, train_s=r.times.train_s * multiplier,
                                            train_max_s=r.times.train_max_s * multiplier)
                jobs.append(r if multiplier == 1.0 else r.with_times(times))
            gains.append(migration_speedup(jobs, seed=seed, iterations=iterations))
        lows.append(min(gains))
        highs.append(max(gains))
    return {"low": float(np.mean(lows)), "high": float(np.mean(highs))}


def migration_rows(ledger: pd.DataFrame, seeds: Sequence[int], iterations: int, hw: Any,
                   pairs: Sequence[Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """The training-time multiplier at which each end of Fig. 12's gain is the paper's."""
    claim, _, ends = _paper_ends(ledger)["migration_speedup"]
    cache: dict[float, dict[str, float]] = {}

    def at(m: float) -> dict[str, float]:
        if m not in cache:
            cache[m] = migration_ends(m, seeds, iterations, hw, pairs)
        return cache[m]

    ours = at(1.0)
    rows = []
    lo, hi = TRAIN_BRACKET
    for end, target in ends.items():
        if end not in ours:
            continue
        f_lo, f_hi = at(lo)[end] - target, at(hi)[end] - target
        if f_lo * f_hi > 0:
            needed = fed = math.nan
            note = (f"no multiplier in [{lo:g}, {hi:g}] gives the paper's {target:g} "
                    f"({end}): {f_lo + target:.4g} at {lo:g}, {f_hi + target:.4g} at {hi:g}")
        else:
            needed = float(brentq(lambda m, e=end, t=target: at(m)[e] - t, lo, hi,
                                  xtol=1e-4))
            fed = at(needed)[end]
            note = (f"factor on every job type's training time at which the gain's {end} "
                    f"end (over the pairs, mean over seeds {', '.join(map(str, seeds))}) is "
                    f"the paper's {target:g}; below 1 the pairs are more rollout-bound")
        rows.append(_row(claim, "migration_speedup", end, "train_time_multiplier", "x",
                         target, ours[end], 1.0, needed, fed, note))
    return rows
