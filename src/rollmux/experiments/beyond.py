"""Results beyond the paper: metrics of one policy against another on the same replays.

The replays' outcomes come from :mod:`rollmux.sim.policy_compare`; this module names them
as the beyond ledger (``src/rollmux/data/beyond.csv``) does, in the metrics contract's
columns (:data:`rollmux.experiments.metrics.METRIC_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from rollmux.experiments.metrics import METRIC_COLUMNS

__all__ = ["comparison_metrics", "slo_optimum_metrics"]


def comparison_metrics(table: pd.DataFrame, baseline: str, candidate: str,
                       labels: Mapping[str, str], prefix: str, source: str) -> pd.DataFrame:
    """Metrics (the metrics contract's columns) of ``candidate`` against ``baseline``.

    ``table``: rows of :data:`COMPARISON_COLUMNS` (seeds are averaged); ``labels``: trace
    -> the label in the metric names, ``<prefix>_<quantity>_<label>``. Per trace: the cost
    of completing the trace and the mean slowdown as ratios candidate / baseline (``x``),
    the candidate's SLO attainment (``%``) and its median decision latency over the
    baseline's (``x``). ValueError naming the trace and policy when a replay is missing.
    """
    means = table.groupby(["trace", "policy"], sort=True).mean(numeric_only=True)
    rows = []
    for trace, label in labels.items():
        for policy in (baseline, candidate):
            if (trace, policy) not in means.index:
                raise ValueError(f"{source}: no replay of policy {policy!r} on trace {trace!r}")
        base, cand = means.loc[(trace, baseline)], means.loc[(trace, candidate)]
        note = f"{candidate} vs {baseline} on {trace}"
        for quantity, value, unit in (
            ("cost_ratio", cand.total_cost_usd / base.total_cost_usd, "x"),
            ("slo_attainment", 100.0 * cand.slo_attainment, "%"),
            ("mean_slowdown_ratio", cand.mean_slowdown / base.mean_slowdown, "x"),
            ("decision_latency_ratio", cand.decision_median_ms / base.decision_median_ms, "x"),
        ):
            rows.append({"metric": f"{prefix}_{quantity}_{label}", "value": float(value),
                         "low": "", "high": "", "unit": unit, "source": source, "note": note})
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
