"""Certified gaps of the optimum-normalised claims: ``results/metrics/gaps/<stage>.csv``.

A claim normalised by an optimum (a cost over ``optimal``'s, C28-C41; over ``regroup``'s,
C47-C51) is only as exact as that optimum. Each optimum replay records its certified gap
(``optimum_gap`` of its summary.json: the largest relative gap (cost - bound) / cost, over
its decisions, between the partition it took and the proven lower bound; 0 when every
decision is proven optimal, NaN when some decision has no bound; docs/optimum.md,
section 6). A stage whose
metrics divide by an optimum writes, beside its metrics file, one row per such metric
(:data:`GAP_METRIC_COLUMNS`): the largest and the mean certified gap over every reference
reading the metric divides by (``readings``: one per setting it spans and seed; a
deterministic reference replay run once counts at every seed it is paired with). The
true optimum's cost is at least (1 - gap) times the reference's, so the claim's ratio to
the true optimum is at most ours / (1 - gap); the claims report names the gap beside the
number (:func:`gap_text`, column ``optimum_gap`` of figures/claims.csv).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rollmux.experiments.metrics import read_checked_table

__all__ = [
    "GAP_METRIC_COLUMNS",
    "GAP_NOTE",
    "GapMetricsError",
    "claim_gap",
    "gap_frame",
    "gap_metrics_path",
    "gap_row",
    "gap_text",
    "read_gap_metrics",
]

#: Columns of ``results/metrics/gaps/<stage>.csv``: one row per optimum-normalised metric.
GAP_METRIC_COLUMNS: tuple[str, ...] = (
    "metric", "reference", "readings", "optimum_gap", "optimum_gap_mean", "source")

#: What the gap shown beside an optimum-normalised claim is (the report's captions).
GAP_NOTE = (
    "A claim normalised by an optimum (`optimal`, `regroup`) names that optimum's certified"
    " gap beside ours: the largest relative gap, over every decision of every reference"
    " replay the number divides by, between the partition taken and its proven lower bound,"
    " (cost - bound) / cost (0: every decision proven optimal). The ratio to the true"
    " optimum is at most ours / (1 - gap) (docs/optimum.md, section 6)."
)


class GapMetricsError(ValueError):
    """A gaps file is malformed or names a metric the claims ledger lacks."""


def gap_metrics_path(stage: str, root: str | Path = "results/metrics") -> Path:
    """The gaps file of ``stage``: ``<root>/gaps/<stage>.csv``."""
    return Path(root) / "gaps" / f"{stage}.csv"


def _number(x: Any) -> float:
    """A gap as a float: NaN for a missing one; ValueError for a negative one."""
    value = math.nan if x is None or x == "" else float(x)
    if value < 0:
        raise ValueError(f"a certified gap is >= 0, got {value!r}")
    return value


def gap_row(metric: str, reference: str, gaps: Iterable[Any], source: str
            ) -> dict[str, Any]:
    """One row of a gaps file: ``metric``'s largest and mean certified gap over the
    reference readings' ``gaps`` (one per setting and seed; NaN or None: that replay has
    no bound, and so has the metric). ValueError for no reading or a negative gap."""
    values = np.array([_number(g) for g in gaps], dtype=float)
    if not len(values):
        raise ValueError(f"{metric}: no reference reading to take the gap of")
    bounded = bool(np.isfinite(values).all())
    return {
        "metric": metric, "reference": reference, "readings": len(values),
        "optimum_gap": float(f"{values.max():.6g}") if bounded else math.nan,
        "optimum_gap_mean": float(f"{values.mean():.6g}") if bounded else math.nan,
        "source": source,
    }


def gap_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows of :func:`gap_row` as a table with :data:`GAP_METRIC_COLUMNS`."""
    return pd.DataFrame(list(rows), columns=list(GAP_METRIC_COLUMNS))


def read_gap_metrics(paths: Sequence[str | Path], metrics: Iterable[str]) -> pd.DataFrame:
    """Read and check gaps files; one row per metric, with ``file``.

    ``metrics``: every metric of the claims ledger. GapMetricsError listing every problem
    (file, line, column): an unreadable file, a wrong header, an unknown metric, a metric
    in two rows, a reading count that is not a positive integer, a gap that is not a number
    >= 0 (an empty gap is allowed: some reference decision has no bound).
    """
    known = set(metrics)
    problems: list[str] = []
    records: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for path in paths:
        table = read_checked_table(path, GAP_METRIC_COLUMNS, problems)
        if table is None:
            continue
        for i, rec in enumerate(table.to_dict("records")):
            where = f"{path}:{i + 2}: row {i + 1}, column"
            metric = rec["metric"].strip()
            if metric not in known:
                problems.append(f"{where} metric: {metric!r} is not a metric of the claims "
                                "ledger")
                continue
            if metric in seen:
                problems.append(f"{where} metric: {metric!r} already at {seen[metric]}")
                continue
            seen[metric] = f"{path}:{i + 2}"
            try:
                readings = int(rec["readings"])
                if readings < 1:
                    raise ValueError(readings)
            except ValueError:
                problems.append(f"{where} readings: {rec['readings']!r} is not an integer "
                                ">= 1")
                continue
            numbers: dict[str, float] = {}
            for column in ("optimum_gap", "optimum_gap_mean"):
                text = rec[column].strip()
                try:
                    value = _number(text)
                    if math.isinf(value):
                        raise ValueError(text)
                except ValueError:
                    problems.append(f"{where} {column}: {text!r} is not a number >= 0")
                    value = math.nan
                numbers[column] = value
            records.append({"metric": metric, "reference": rec["reference"].strip(),
                            "readings": readings, **numbers, "file": str(path)})
    if problems:
        raise GapMetricsError("\n".join(problems))
    return pd.DataFrame(records, columns=["metric", "reference", "readings", "optimum_gap",
                                          "optimum_gap_mean", "file"])


def claim_gap(gaps: Mapping[str, float] | None, metric: str) -> float:
    """The certified gap a claim on ``metric`` names: NaN when ``gaps`` lacks it (not
    normalised by an optimum); 1 when its optimum has a decision without a lower bound
    (the trivial bound 0: (cost - 0) / cost); else the gap."""
    if gaps is None or metric not in gaps:
        return math.nan
    gap = float(gaps[metric])
    return 1.0 if math.isnan(gap) else gap


def gap_text(gap: float) -> str:
    """How the report names a claim's certified gap (:func:`claim_gap`): ``''`` for none,
    ``optimum's gap 0 (proven)``, ``optimum's gap <= 0.31%``, or ``optimum's gap
    unbounded`` (1: a decision without a lower bound)."""
    if math.isnan(gap):
        return ""
    if gap >= 1.0:
        return "optimum's gap unbounded (a decision without a lower bound)"
    if gap == 0:
        return "optimum's gap 0 (proven)"
    return f"optimum's gap <= {100.0 * gap:.2g}%"
