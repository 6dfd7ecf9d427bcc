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
    "IDEALISED",
    "RATIO_COLUMNS",
    "cheapest_meeting_every_slo",
    "crossover_ratios",
    "crossover_table",
    "design_metrics",
    "design_row",
    "gpu_hours",
    "ledger_metrics",
    "trace_label",
]

#: One replay of one design on one trace.
COMPARISON_COLUMNS: tuple[str, ...] = (
    "trace", "lengths", "policy", "seed", "jobs", "jobs_completed", "total_cost_usd",
    "work_solo_job_h", "cost_per_work_usd", "slo_attainment", "slo_attainment_realised",
    "peak_gpus_H20", "peak_gpus_H800", "gpu_h_H20", "gpu_h_H800", "busy_rollout_gpu_h",
    "busy_train_gpu_h", "staleness", "fidelity",
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
        "fidelity": str(config.get("fidelity", "event")),
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


def _meets_every_slo(part: pd.DataFrame) -> bool:
    """Whether every replay of ``part`` met every job's SLO under both readings."""
    return bool(len(part)) and bool(((part.slo_attainment >= 1.0 - 1e-12)
                                     & (part.slo_attainment_realised >= 1.0 - 1e-12)).all())


#: Idealised references, not designs a fleet can run: never "the cheapest design". The
#: optimum re-solves the partition at every arrival and regroups for free (paper sec. 6.5).
IDEALISED: tuple[str, ...] = ("optimal",)


def _candidates(rows: pd.DataFrame, on_policy: bool) -> pd.DataFrame:
    """The replays of runnable designs (not :data:`IDEALISED`), on-policy ones only if asked."""
    rows = rows[~rows["policy"].isin(IDEALISED)]
    return rows[rows["staleness"] == 0] if on_policy else rows


def cheapest_meeting_every_slo(rows: pd.DataFrame, on_policy: bool = False
                               ) -> dict[tuple[str, str], str]:
    """Per (trace, lengths): the cheapest design whose every job met its SLO, both readings.

    Cheapest by the mean cost over seeds; a design qualifies when it met every SLO at
    every seed; the idealised optimum (:data:`IDEALISED`) never does. ``on_policy``: only
    designs that recorded no staleness (synchronous RL). An empty name when no design did.
    """
    out: dict[tuple[str, str], str] = {}
    rows = _candidates(rows, on_policy)
    for (trace, lengths), part in rows.groupby(["trace", "lengths"], sort=True):
        ok = {str(policy): float(runs.total_cost_usd.mean())
              for policy, runs in part.groupby("policy", sort=True) if _meets_every_slo(runs)}
        out[(str(trace), str(lengths))] = min(ok, key=lambda p: (ok[p], p)) if ok else ""
    return out


def _label(name: str) -> str:
    """A trace or policy name as a metric-name part."""
    return name.replace("-", "_").replace(".", "_")


def trace_label(trace: str, lengths: str = "") -> str:
    """A trace (and the real lengths it was replayed with) as a metric-name part."""
    return _label(f"{trace}_{lengths}" if lengths else trace)


def _metric(metric: str, values: Sequence[float], unit: str, source: str,
            note: str) -> dict[str, object]:
    """One metrics row: the mean of per-seed ``values``, its 95 % interval from two seeds."""
    from rollmux.experiments.intervals import t_interval

    ci = t_interval(values)
    spread = ci.n > 1
    return {"metric": metric, "value": ci.mean, "low": ci.low if spread else "",
            "high": ci.high if spread else "", "unit": unit, "source": source,
            "note": f"{note}; {ci.n} seed(s)"}


def _paired_ratio(candidate: pd.DataFrame, baseline: pd.DataFrame) -> list[float]:
    """Per-seed cost of ``candidate`` over ``baseline``'s (frames indexed by seed), paired."""
    seeds = candidate.index.intersection(baseline.index)
    return [float(x) for x in
            candidate.total_cost_usd.loc[seeds] / baseline.total_cost_usd.loc[seeds]]


def design_metrics(rows: pd.DataFrame, source: str, paper_ratio: float,
                   baseline: str = "rollmux", two_pools: str = "rollmux",
                   one_pool: str = "verl") -> pd.DataFrame:
    """The comparison's numbers in the metrics contract (:data:`METRIC_COLUMNS`).

    ``rows``: :data:`COMPARISON_COLUMNS`, one per replay (every seed). Per trace (and
    lengths, ``designs_<quantity>_<trace>[_<lengths>]``), each the mean over seeds with a
    95 % Student-t interval from two seeds on (replays paired by seed):

    * per design, its cost of completing the trace over ``baseline``'s
      (``designs_<design>_cost_ratio_<trace>``, ``x``) and its SLO attainment under the
      realised and the paper-reference readings (``..._slo_attainment_realised_...``,
      ``..._slo_attainment_...``, ``%``);
    * the cheapest design (mean cost) that met every SLO under both readings at every
      seed, over all runnable designs (not the idealised optimum) and over the on-policy
      ones (``designs_cheapest_cost_ratio``,
      ``designs_cheapest_on_policy_cost_ratio``: its cost over ``baseline``'s; the note
      names it); left out when no design met every SLO;
    * the price ratio above which ``two_pools`` costs less than ``one_pool``
      (``designs_crossover_price_ratio``, :func:`crossover_ratios` per seed); left out
      when two pools never win (infinite).
    """
    from rollmux.experiments.metrics import METRIC_COLUMNS

    out: list[dict[str, object]] = []
    cheapest = cheapest_meeting_every_slo(rows)
    on_policy = cheapest_meeting_every_slo(rows, on_policy=True)
    for (trace, lengths), part in rows.groupby(["trace", "lengths"], sort=True):
        label = trace_label(str(trace), str(lengths))
        where = f"{trace}" + (f" with {lengths} lengths" if lengths else "")
        per = {str(p): runs.groupby("seed", sort=True).mean(numeric_only=True)
               for p, runs in part.groupby("policy", sort=True)}
        base = per.get(baseline)

        for policy, runs in per.items():
            name = f"designs_{_label(policy)}"
            note = f"{policy} on {where}"
            if base is not None and policy != baseline:
                out.append(_metric(f"{name}_cost_ratio_{label}", _paired_ratio(runs, base),
                                   "x", source, f"{note}, over {baseline}"))
            out.append(_metric(f"{name}_slo_attainment_realised_{label}",
                               list(100.0 * runs.slo_attainment_realised), "%", source,
                               f"{note}, realised reading"))
            out.append(_metric(f"{name}_slo_attainment_{label}",
                               list(100.0 * runs.slo_attainment), "%", source,
                               f"{note}, paper-reference reading"))
        if base is not None:
            for metric, found in (("designs_cheapest_cost_ratio", cheapest),
                                  ("designs_cheapest_on_policy_cost_ratio", on_policy)):
                design = found.get((str(trace), str(lengths)), "")
                if design:
                    qualified = sorted(
                        str(p) for p, r in _candidates(part, found is on_policy).groupby(
                            "policy") if _meets_every_slo(r))
                    out.append(_metric(f"{metric}_{label}", _paired_ratio(per[design], base),
                                       "x", source, f"{design} on {where}, over {baseline}; "
                                       f"meeting every SLO: {', '.join(qualified)}"))
        if two_pools in per and one_pool in per:
            crossings = [float(crossover_ratios(part[part.seed == seed], two_pools, one_pool,
                                                paper_ratio).crossover_price_ratio.iloc[0])
                         for seed in sorted(set(per[two_pools].index)
                                            & set(per[one_pool].index))]
            if crossings and all(math.isfinite(c) for c in crossings):
                out.append(_metric(f"designs_crossover_price_ratio_{label}", crossings, "x",
                                   source, f"{two_pools} (two pools) over {one_pool} (one "
                                           f"pool) on {where}; paper's ratio "
                                           f"{paper_ratio:.3g}"))
    return pd.DataFrame(out, columns=list(METRIC_COLUMNS))


def ledger_metrics(metrics: pd.DataFrame, ledger: pd.DataFrame, prefix: str = "designs_"
                   ) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``metrics`` the beyond ``ledger`` names, and its ``prefix`` metrics
    that are not among them (the claims report fails on those, naming the row).

    The comparison computes a number per trace and design for whatever the config
    replays; the ledger names those the report states, so the metrics file it reads
    holds only ledger metrics (:func:`rollmux.experiments.claims.read_metrics`).
    """
    named = set(ledger["metric"])
    ours = sorted(m for m in named if m.startswith(prefix))
    kept = metrics[metrics["metric"].isin(named)]
    return kept.reset_index(drop=True), sorted(set(ours) - set(kept["metric"]))
