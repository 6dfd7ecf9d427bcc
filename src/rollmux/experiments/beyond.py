"""Results beyond the paper: metrics of one policy against another on the same replays.

The replays' outcomes come from :mod:`rollmux.sim.policy_compare`; this module names them
as the beyond ledger (``src/rollmux/data/beyond.csv``) does, in the metrics contract's
columns (:data:`rollmux.experiments.metrics.METRIC_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from rollmux.experiments.metrics import METRIC_COLUMNS

__all__ = ["comparison_metrics"]


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
