"""The designs compared on the same traces, and where two fixed pools beat one shared pool.

docs/designs.md, sections 4 and 5. Inputs are replay folders (``rollmux simulate``
outputs: summary.json, jobs.csv, events.csv, timeseries.csv); outputs are plain tables:

* :func:`design_row`: one replay as a row of :data:`COMPARISON_COLUMNS`: total cost, cost
  per unit of work, SLO attainment under both readings, peak GPUs per type, GPU-hours per
  type and the staleness its admissions recorded.
* :func:`crossover_table`: each replay's cost re-priced over a range of price ratios
  ``p = c_H800 / c_H20`` (the H20 price fixed), and :func:`crossover_ratios`, per trace,
  the ratio above which the two-pool design is cheaper than the one-pool design.

Re-pricing is exact, not a model: every policy compared here decides independently of the
price ratio (Solo-D, veRL, timeslice and async-solo-d never compare prices; RollMux's
candidates are ordered by marginal cost, where rollout scaling adds H20 nodes only and is
always cheaper than a new group, which adds both types, for every ratio > 0: the order,
and so every decision, is the same), so a replay's GPU-hours per type do not depend on the
prices and its cost at ratio ``p`` is ``c_H20 (H20-hours + p H800-hours)``
(tests/test_designs.py checks it on a replay at two prices).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "COMPARISON_COLUMNS",
    "CROSSOVER_COLUMNS",
    "RATIO_COLUMNS",
    "cheapest_meeting_every_slo",
    "crossover_ratios",
    "crossover_table",
    "design_metrics",
    "design_row",
    "gpu_hours",
]

#: One replay of one design on one trace.
COMPARISON_COLUMNS: tuple[str, ...] = (
    "trace", "lengths", "policy", "seed", "jobs", "jobs_completed", "total_cost_usd",
    "work_solo_job_h", "cost_per_work_usd", "slo_attainment", "slo_attainment_realised",
    "peak_gpus_H20", "peak_gpus_H800", "gpu_h_H20", "gpu_h_H800", "busy_rollout_gpu_h",
    "busy_train_gpu_h", "staleness",
)
#: A replay re-priced at one price ratio.
CROSSOVER_COLUMNS: tuple[str, ...] = (
    "trace", "lengths", "policy", "price_ratio", "total_cost_usd", "cost_per_work_usd",
)
#: Per trace: the rollout share of its work and the crossover price ratio.
RATIO_COLUMNS: tuple[str, ...] = (
    "trace", "lengths", "rollout_share", "two_pools", "one_pool", "crossover_price_ratio",
    "paper_price_ratio", "two_pools_cheaper_at_paper_ratio",
)

SECONDS_PER_HOUR = 3600.0


def gpu_hours(timeseries: pd.DataFrame, gpu_types: Sequence[str]) -> dict[str, float]:
    """Provisioned GPU-hours per type: the integral of the step function of GPUs."""
    t = timeseries["time_s"].to_numpy(dtype=float)
    widths = np.diff(t)
    out = {}
    for g in gpu_types:
        column = f"gpus_{g}"
        gpus = timeseries[column].to_numpy(dtype=float) if column in timeseries else \
            np.zeros(len(t))
        out[g] = float(np.sum(gpus[:-1] * widths)) / SECONDS_PER_HOUR
    return out


def _staleness(events: pd.DataFrame) -> int:
    """The largest staleness an admission recorded (0: every job synchronous)."""
    detail = events.get("detail")
    if detail is None:
        return 0
    values = [int(str(d).split("=", 1)[1]) for d in detail.dropna()
              if str(d).startswith("staleness=")]
    return max(values, default=0)


def design_row(folder: str | Path, trace: str, lengths: str = "",
               gpu_types: Sequence[str] = ("H20", "H800")) -> dict[str, object]:
    """One replay folder as a row of :data:`COMPARISON_COLUMNS`.

    Work is counted in solo-equivalent job-hours: each job's completed iterations times its
    realised synchronous solo iteration (the same draws), so a design that runs the same
    iterations faster or on fewer GPUs has a lower cost per unit of work.
    """
    folder = Path(folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    jobs = pd.read_csv(folder / "jobs.csv")
    events = pd.read_csv(folder / "events.csv", keep_default_na=False, na_values=[""])
    timeseries = pd.read_csv(folder / "timeseries.csv")
    work_h = float((jobs["iterations_done"] * jobs["solo_iteration_realised_s"]).sum()
                   ) / SECONDS_PER_HOUR
    hours = gpu_hours(timeseries, gpu_types)
    peak = summary.get("peak_gpus") or {}
    total = float(summary["total_cost_usd"])
    return {
        "trace": trace,
        "lengths": lengths,
        "policy": str(config.get("policy", "")),
        "seed": int(config.get("seed", 0)),
        "jobs": int(summary["jobs"]),
        "jobs_completed": int(summary["jobs_completed"]),
        "total_cost_usd": total,
        "work_solo_job_h": work_h,
        "cost_per_work_usd": total / work_h if work_h > 0 else math.nan,
        "slo_attainment": float(summary["slo_attainment"]),
        "slo_attainment_realised": float(summary["slo_attainment_realised"]),
        "peak_gpus_H20": int(peak.get("H20", 0)),
        "peak_gpus_H800": int(peak.get("H800", 0)),
        "gpu_h_H20": hours.get("H20", 0.0),
        "gpu_h_H800": hours.get("H800", 0.0),
        "busy_rollout_gpu_h": float(jobs["busy_rollout_gpu_s"].sum()) / SECONDS_PER_HOUR,
        "busy_train_gpu_h": float(jobs["busy_train_gpu_s"].sum()) / SECONDS_PER_HOUR,
        "staleness": _staleness(events),
    }


def crossover_table(rows: pd.DataFrame, price_ratios: Sequence[float],
                    h20_price_usd_per_h: float) -> pd.DataFrame:
    """Every replay of ``rows`` (:data:`COMPARISON_COLUMNS`) re-priced at each ratio."""
    out = []
    for rec in rows.itertuples(index=False):
        for p in price_ratios:
            cost = h20_price_usd_per_h * (rec.gpu_h_H20 + p * rec.gpu_h_H800)
            out.append({"trace": rec.trace, "lengths": rec.lengths, "policy": rec.policy,
                        "price_ratio": float(p), "total_cost_usd": cost,
                        "cost_per_work_usd": cost / rec.work_solo_job_h
                        if rec.work_solo_job_h > 0 else math.nan})
    return pd.DataFrame(out, columns=list(CROSSOVER_COLUMNS))


def crossover_ratios(rows: pd.DataFrame, two_pools: str, one_pool: str, paper_ratio: float,
                     balance_policy: str = "solo-d") -> pd.DataFrame:
    """Per trace: the price ratio above which ``two_pools`` costs less than ``one_pool``.

    The trace's balance is the rollout share of its busy GPU-hours under
    ``balance_policy`` (Solo-D: each phase on the GPUs the job asked for).

    With GPU-hours ``a_20, a_800`` (two pools) and ``b_800`` (one pool, no H20), the two
    costs are equal at ``p* = a_20 / (b_800 - a_800)``; ``inf`` when the one-pool design
    uses no more H800-hours (two pools never win), 0 when it is cheaper at no ratio.
    """
    means = rows.groupby(["trace", "lengths", "policy"], sort=True).mean(numeric_only=True)
    out = []
    for trace, lengths in sorted({(r.trace, r.lengths) for r in rows.itertuples()}):
        if (trace, lengths, two_pools) not in means.index or (
                trace, lengths, one_pool) not in means.index:
            raise ValueError(f"crossover: no replay of {two_pools!r} and {one_pool!r} on "
                             f"trace {trace!r} (lengths {lengths!r})")
        a, b = means.loc[(trace, lengths, two_pools)], means.loc[(trace, lengths, one_pool)]
        extra_800 = b.gpu_h_H800 - a.gpu_h_H800
        ratio = math.inf if extra_800 <= 0 else a.gpu_h_H20 / extra_800
        share = math.nan
        if (trace, lengths, balance_policy) in means.index:
            c = means.loc[(trace, lengths, balance_policy)]
            busy = c.busy_rollout_gpu_h + c.busy_train_gpu_h
            share = c.busy_rollout_gpu_h / busy if busy > 0 else math.nan
        out.append({"trace": trace, "lengths": lengths,
                    "rollout_share": share, "two_pools": two_pools,
                    "one_pool": one_pool, "crossover_price_ratio": ratio,
                    "paper_price_ratio": paper_ratio,
                    "two_pools_cheaper_at_paper_ratio": bool(paper_ratio > ratio)})
    return pd.DataFrame(out, columns=list(RATIO_COLUMNS))


def cheapest_meeting_every_slo(rows: pd.DataFrame, on_policy: bool = False
                               ) -> dict[tuple[str, str], str]:
    """Per (trace, lengths): the cheapest design whose every job met its SLO, both readings.

    ``on_policy``: only designs that recorded no staleness (synchronous RL). An empty name
    when no design did.
    """
    out: dict[tuple[str, str], str] = {}
    if on_policy:
        rows = rows[rows["staleness"] == 0]
    means = rows.groupby(["trace", "lengths", "policy"], sort=True).mean(numeric_only=True)
    for (trace, lengths), part in means.groupby(level=["trace", "lengths"]):
        ok = part[(part.slo_attainment >= 1.0 - 1e-12)
                  & (part.slo_attainment_realised >= 1.0 - 1e-12)]
        out[(str(trace), str(lengths))] = (
            str(ok.total_cost_usd.idxmin()[2]) if len(ok) else "")
    return out


def _named(found: dict[tuple[str, str], str], key: tuple[str, str]) -> str:
    """A cheapest design's name for a note: ``none`` if none met every SLO."""
    if key not in found:
        return "not compared on this trace"
    return found[key] or "none"


def _label(name: str) -> str:
    """A trace or policy name as a metric-name part."""
    return name.replace("-", "_").replace(".", "_")


def design_metrics(rows: pd.DataFrame, ratios: pd.DataFrame, source: str,
                   baseline: str = "rollmux") -> pd.DataFrame:
    """The comparison's numbers in the metrics contract (:data:`METRIC_COLUMNS`).

    Per trace (synthetic lengths) and design: its cost of completing the trace over
    ``baseline``'s (``x``), its realised SLO attainment (``%``) and its staleness; per trace
    the crossover price ratio (``x``), noting the cheapest design that met every SLO.
    """
    from rollmux.experiments.metrics import METRIC_COLUMNS

    means = rows.groupby(["trace", "lengths", "policy"], sort=True).mean(numeric_only=True)
    cheapest = cheapest_meeting_every_slo(rows)
    on_policy = cheapest_meeting_every_slo(rows, on_policy=True)
    out = []
    for (trace, lengths, policy), rec in means.iterrows():
        if lengths:
            continue
        base = means.loc[(trace, lengths, baseline)] if (trace, lengths, baseline) in \
            means.index else None
        name = f"designs_{_label(policy)}"
        note = f"{policy} on {trace}"
        if base is not None:
            out.append({"metric": f"{name}_cost_ratio_{_label(trace)}",
                        "value": float(rec.total_cost_usd / base.total_cost_usd), "low": "",
                        "high": "", "unit": "x", "source": source,
                        "note": f"{note}, over {baseline}"})
        out.append({"metric": f"{name}_slo_attainment_realised_{_label(trace)}",
                    "value": 100.0 * float(rec.slo_attainment_realised), "low": "",
                    "high": "", "unit": "%", "source": source, "note": note})
    for rec in ratios.itertuples(index=False):
        if rec.lengths:
            continue
        out.append({"metric": f"designs_crossover_price_ratio_{_label(rec.trace)}",
                    "value": float(rec.crossover_price_ratio), "low": "", "high": "",
                    "unit": "x", "source": source,
                    "note": f"{rec.two_pools} over {rec.one_pool}; cheapest design meeting "
                            f"every SLO: {_named(cheapest, (rec.trace, rec.lengths))}, "
                            f"on-policy: {_named(on_policy, (rec.trace, rec.lengths))}"})
    return pd.DataFrame(out, columns=list(METRIC_COLUMNS))
