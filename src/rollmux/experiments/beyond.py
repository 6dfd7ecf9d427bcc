"""Results beyond the paper: metrics of one policy against another on the same replays.

The replays' outcomes come from :mod:`rollmux.sim.policy_compare`; this module names them
as the beyond ledger (``src/rollmux/data/beyond.csv``) does, in the metrics contract's
columns (:data:`rollmux.experiments.metrics.METRIC_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rollmux.experiments.metrics import METRIC_COLUMNS

__all__ = ["comparison_metrics", "slo_optimum_metrics"]


def _interval(values: np.ndarray) -> tuple[object, object]:
    """95 % Student-t interval of the mean of per-seed values ("" with fewer than 2)."""
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return "", ""
    from scipy import stats

    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return float(values.mean() - half), float(values.mean() + half)


def comparison_metrics(table: pd.DataFrame, baseline: str, candidate: str,
                       labels: Mapping[str, str], prefix: str, source: str,
                       with_baseline: bool = True,
                       with_latency: bool = True) -> pd.DataFrame:
    """Metrics (the metrics contract's columns) of ``candidate`` against ``baseline``.

    ``table``: rows of :data:`COMPARISON_COLUMNS`, one per replay and seed; ``labels``:
    trace -> the label in the metric names, ``<prefix>_<quantity>_<label>``. Per trace,
    each the mean over seeds (replays paired by seed) with a 95 % Student-t interval
    (``low``/``high``) when there are two seeds or more: the cost of completing the trace
    and the mean slowdown as ratios candidate / baseline (``x``); the candidate's SLO
    attainment under the three readings, paper reference (``slo_attainment``), realised
    and planned (``%``); its per-iteration tail, iterations above ``SLO x T_solo`` and
    the jobs with any (``count``); with ``with_baseline`` the baseline's three readings
    and tail (``baseline_...``); with ``with_latency`` the median decision latency ratio
    (``x``). ValueError naming the trace and policy when a replay is missing.
    """
    rows = []
    for trace, label in labels.items():
        per = {}
        for policy in (baseline, candidate):
            part = table[(table["trace"] == trace) & (table["policy"] == policy)]
            if not len(part):
                raise ValueError(f"{source}: no replay of policy {policy!r} on trace {trace!r}")
            per[policy] = part.groupby("seed", sort=True).mean(numeric_only=True)
        base, cand = per[baseline], per[candidate]
        seeds = base.index.intersection(cand.index)
        base, cand = base.loc[seeds], cand.loc[seeds]
        note = f"{candidate} vs {baseline} on {trace}, {len(seeds)} seed(s)"

        def col(frame: pd.DataFrame, name: str) -> np.ndarray:
            if name not in frame:
                return np.full(len(frame), np.nan)
            return frame[name].to_numpy(dtype=float)

        quantities = [
            ("cost_ratio", col(cand, "total_cost_usd") / col(base, "total_cost_usd"), "x"),
        ]
        sides = [("", cand)] + ([("baseline_", base)] if with_baseline else [])
        for side, frame in sides:
            quantities += [
                (f"{side}slo_attainment", 100.0 * col(frame, "slo_attainment"), "%"),
                (f"{side}slo_attainment_realised",
                 100.0 * col(frame, "slo_attainment_realised"), "%"),
                (f"{side}slo_attainment_planned",
                 100.0 * col(frame, "slo_attainment_planned"), "%"),
                (f"{side}iterations_above_slo", col(frame, "iterations_above_slo"), "count"),
                (f"{side}jobs_above_slo", col(frame, "jobs_above_slo"), "count"),
            ]
        quantities.append(("mean_slowdown_ratio",
                           col(cand, "mean_slowdown") / col(base, "mean_slowdown"), "x"))
        if with_latency:
            quantities.append(("decision_latency_ratio",
                               col(cand, "decision_median_ms") / col(base, "decision_median_ms"),
                               "x"))
        for quantity, values, unit in quantities:
            low, high = _interval(values)
            rows.append({"metric": f"{prefix}_{quantity}_{label}",
                         "value": float(np.nanmean(values)) if np.isfinite(values).any()
                         else float("nan"),
                         "low": low, "high": high, "unit": unit, "source": source,
                         "note": note})
    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS))


def slo_optimum_metrics(table: pd.DataFrame, summary: pd.DataFrame, source: str,
                        prefix: str = "rollmux_repeat_planner") -> pd.DataFrame:
    """Metrics of rollmux-repeat's planner against the certified SLO-constrained optimum.

    ``table``/``summary``: :data:`rollmux.theorem1.slo_optimum.SLO_OPTIMUM_COLUMNS` and
    :data:`~rollmux.theorem1.slo_optimum.SLO_SUMMARY_COLUMNS`. Over every group: the share
    where the planner is optimal (``%``), the mean gap with the 95 % bootstrap interval of
    the per-size means' extremes (``%``) and the largest gap (``%``). ValueError naming
    ``source`` when the table is empty.
    """
    if not len(table):
        raise ValueError(f"{source}: no groups")
    sizes = ", ".join(str(int(n)) for n in summary["n_jobs"])
    note = f"{len(table)} random groups of {sizes} jobs; certified: {int(table['certified'].sum())}"
    gap = 100.0 * table["gap"].astype(float)
    rows = [
        (f"{prefix}_optimal_share", 100.0 * table["heuristic_optimal"].astype(bool).mean(),
         "", "", "%"),
        (f"{prefix}_gap_mean", float(gap.mean()),
         100.0 * float(summary["gap_mean_low"].min()),
         100.0 * float(summary["gap_mean_high"].max()), "%"),
        (f"{prefix}_gap_max", float(gap.max()), "", "", "%"),
    ]
    return pd.DataFrame([{"metric": m, "value": v, "low": lo, "high": hi, "unit": u,
                          "source": source, "note": note} for m, v, lo, hi, u in rows],
                        columns=list(METRIC_COLUMNS))
