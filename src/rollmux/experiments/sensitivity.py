"""Scheduler quality in simulation (paper sec. 6.5, Fig. 15, 20): the claims metrics.

The sensitivity sweep (workload type, SLO setting, group-size limit) and the mixed
workload are planned by :func:`rollmux.sim.sweeps.sweep_plan` from the config and
collected by :func:`rollmux.sim.sweeps.sensitivity_table`; :func:`simulation_metrics`
turns those tables into the rows of ``results/metrics/simulation.csv`` (claims C28-C44;
the contract: :mod:`rollmux.experiments.metrics`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from rollmux.experiments.metrics import (
    ATTAINMENT_METRICS,
    BESIDE_READING,
    STATUS_READING,
    metric_row,
    metric_unit,
    metrics_frame,
    split_reading,
    with_reading,
)
from rollmux.experiments.optimum_gaps import gap_frame, gap_row
from rollmux.sim.sweeps import (
    AVERAGE_COST_COLUMN,
    COST_COLUMN,
    READING_COLUMNS,
    slo_label,
)

__all__ = ["OPTIMUM_NORMALISED", "read_sweep_table", "simulation_gaps", "simulation_metrics",
           "simulation_metrics_over_seeds"]

_COST_WHAT = "total cost / optimal's"
_SLO_WHAT = "SLO attainment, realised reading (realised over solo on the same draws)"
_REALISED = "slo_attainment_realised"
_REFERENCE = "slo_attainment_reference"


def read_sweep_table(path: str) -> pd.DataFrame:
    """A sensitivity or mixed-workload table as the sweeps write it (results/sim/
    sensitivity.csv, mixed.csv), its setting values and SLOs kept as text ("1.50",
    "trace"), as the metrics select them."""
    return pd.read_csv(path, dtype={"value": str, "slo": str})


def _setting_means(sens: pd.DataFrame) -> pd.DataFrame:
    """Sensitivity rows averaged over seeds per (kind, value, policy)."""
    return sens.groupby(["kind", "value", "policy"], sort=True, as_index=False)[
        ["total_cost_over_optimal", "cost_over_optimal", "slo_attainment",
         *READING_COLUMNS]].mean()


def _span(frame: pd.DataFrame, kind: str, policies: Sequence[str], column: str,
          values: Sequence[str] | None = None, scale: float = 1.0) -> tuple[float, float]:
    """(min, max) of ``column`` over a kind's settings (optionally some values) and policies.

    NaN values are skipped (pandas' ``min``/``max``); NaN, NaN when no row matches or every
    matching value is NaN. On numpy arrays: the search of rollmux.experiments.near_edge
    evaluates these metrics thousands of times, and pandas' row selection was most of it.
    """
    mask = (frame["kind"].to_numpy() == kind) & np.isin(frame["policy"].to_numpy(),
                                                         list(policies))
    if values is not None:
        mask &= np.isin(frame["value"].to_numpy(), list(values))
    part = frame[column].to_numpy(dtype=float)[mask]
    part = part[~np.isnan(part)]
    if not len(part):
        return math.nan, math.nan
    return float(part.min()) * scale, float(part.max()) * scale


def simulation_metrics(sens: pd.DataFrame, mixed: pd.DataFrame, sources: str,
                       slo_endpoints: Sequence[str] = ("1.2", "2"),
                       window_note: str = "",
                       metrics: Collection[str] | None = None) -> pd.DataFrame:
    """Claims C28-C44 from the sensitivity and mixed-workload tables (means over seeds).

    Costs over the optimum are total-cost ratios (:data:`COST_COLUMN`), the time-average
    ratios in the notes (docs/metrics.md, "Cost ratio": which one each figure plots).

    Ranges are min..max over the settings the paper's range spans: the four workload
    types (C28-C32), every SLO setting (C33), SLO ``slo_endpoints`` (C34, C35), every
    group-size limit (C36, C37). ``window_note`` is appended to each note (e.g. the
    trace window of the quick profile). ``metrics`` (default: all) keeps the rows of
    those metrics (and their reading companions) only, each computed as in the whole
    file (the what-it-would-take searches read one metric at a time).
    """
    keep = None if metrics is None else {split_reading(m)[0] for m in metrics}

    def want(metric: str) -> bool:
        return keep is None or metric in keep

    means = _setting_means(sens)
    slo_endpoints = [slo_label(v) for v in slo_endpoints]
    tail = f"{window_note}" if window_note else ""
    kind_of, value_of = means["kind"].to_numpy(), means["value"].to_numpy()
    kinds: dict[str, str] = {}

    def settings_of(kind: str) -> str:
        """The kind's setting values, as the notes list them."""
        if kind not in kinds:
            kinds[kind] = ", ".join(sorted(set(value_of[kind_of == kind]), key=str))
        return kinds[kind]

    base = ("random", "greedy")
    rows = []

    def rng(metric: str, kind: str, policies: Sequence[str], column: str,
            what: str, values: Sequence[str] | None = None) -> None:
        if not want(metric):
            return
        scale = 100.0 if metric_unit(metric) == "%" else 1.0
        low, high = _span(means, kind, policies, column, values, scale)
        over = ", ".join(values) if values is not None else settings_of(kind)
        if column == COST_COLUMN:
            lo_avg, hi_avg = _span(means, kind, policies, AVERAGE_COST_COLUMN, values)
            what = f"{what} (time-average ratio {lo_avg:.4g} to {hi_avg:.4g})"
        rows.append(metric_row(metric, sources, f"{what}: min..max over {kind} "
                               f"{over} ({'/'.join(policies)}){tail}", low=low, high=high))
        if metric in ATTAINMENT_METRICS:  # the paper-reference reading beside it
            low, high = _span(means, kind, policies, _REFERENCE, values, scale)
            rows.append(metric_row(with_reading(metric, BESIDE_READING), sources,
                                   f"{what}, paper-reference reading: min..max over {kind} "
                                   f"{over} ({'/'.join(policies)}){tail}", low=low, high=high))

    cost = COST_COLUMN
    rng("cost_over_opt_rollmux_by_workload", "workload", ("rollmux",), cost, _COST_WHAT)
    rng("cost_over_opt_random_by_workload", "workload", ("random",), cost, _COST_WHAT)
    rng("slo_random_by_workload", "workload", ("random",), _REALISED, _SLO_WHAT)
    rng("cost_over_opt_greedy_by_workload", "workload", ("greedy",), cost, _COST_WHAT)
    rng("slo_greedy_by_workload", "workload", ("greedy",), _REALISED, _SLO_WHAT)
    rng("cost_over_opt_baselines_by_slo", "slo", base, cost, _COST_WHAT)
    rng("slo_random_by_slo", "slo", ("random",), _REALISED, _SLO_WHAT, list(slo_endpoints))
    rng("slo_greedy_by_slo", "slo", ("greedy",), _REALISED, _SLO_WHAT, list(slo_endpoints))
    rng("slo_baselines_by_groupsize", "maxgroup", base, _REALISED, _SLO_WHAT)
    rng("cost_over_opt_baselines_by_groupsize", "maxgroup", base, cost, _COST_WHAT)
    roll = means[means["policy"] == "rollmux"] if want("slo_rollmux_simulation") else None
    for reading, column in ((STATUS_READING, _REALISED), (BESIDE_READING, _REFERENCE)):
        name = "slo_rollmux_simulation"
        if roll is None:
            break
        rows.append(metric_row(name if reading == STATUS_READING else
                               with_reading(name, reading), sources,
                               f"minimum RollMux SLO attainment over all {len(roll)} "
                               f"simulation settings, {reading} reading (max "
                               f"{100.0 * roll[column].max():.4g}){tail}",
                               value=100.0 * float(roll[column].min())))
    mix_metrics = [f"cost_over_opt_{p}_mixed" for p in ("rollmux", "random", "greedy")] + [
        "slo_random_mixed", "slo_greedy_mixed", "peak_gpus_rollmux_mixed"]
    mix = (mixed.groupby("policy").mean(numeric_only=True)
           if any(want(m) for m in mix_metrics) else None)
    for policy, key in (("rollmux", "rollmux"), ("random", "random"), ("greedy", "greedy")):
        if mix is None or not want(f"cost_over_opt_{key}_mixed"):
            continue
        rows.append(metric_row(f"cost_over_opt_{key}_mixed", sources,
                            f"{_COST_WHAT} on the mixed workload (default setting; "
                            f"time-average ratio "
                            f"{float(mix.loc[policy, AVERAGE_COST_COLUMN]):.4g}){tail}",
                            value=float(mix.loc[policy, COST_COLUMN])))
    for policy in ("random", "greedy"):
        for reading, column in ((STATUS_READING, _REALISED), (BESIDE_READING, _REFERENCE)):
            name = f"slo_{policy}_mixed"
            if mix is None or not want(name):
                break
            rows.append(metric_row(name if reading == STATUS_READING else
                                   with_reading(name, reading), sources,
                                   f"SLO attainment on the mixed workload (default setting), "
                                   f"{reading} reading{tail}",
                                   value=100.0 * float(mix.loc[policy, column])))
    if mix is not None and want("peak_gpus_rollmux_mixed"):
        rows.append(metric_row("peak_gpus_rollmux_mixed", sources,
                               f"RollMux peak provisioned GPUs (H20 + H800 at one time) on "
                               f"the mixed workload{tail}",
                               value=float(mix.loc["rollmux", "peak_gpus_total"])))
    order = ["cost_over_opt_rollmux_by_workload", "cost_over_opt_random_by_workload",
             "slo_random_by_workload", "cost_over_opt_greedy_by_workload",
             "slo_greedy_by_workload", "cost_over_opt_baselines_by_slo", "slo_random_by_slo",
             "slo_greedy_by_slo", "slo_baselines_by_groupsize",
             "cost_over_opt_baselines_by_groupsize", "slo_rollmux_simulation",
             "cost_over_opt_rollmux_mixed", "cost_over_opt_random_mixed",
             "cost_over_opt_greedy_mixed", "slo_random_mixed", "slo_greedy_mixed",
             "peak_gpus_rollmux_mixed"]
    frame = metrics_frame(rows, "simulation")
    # each metric in the declared order, its reading companion right after it
    rank = {name: i for i, name in enumerate(order)}
    frame["_rank"] = [rank[split_reading(m)[0]] + 0.5 * bool(split_reading(m)[1])
                      for m in frame["metric"]]
    return frame.sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(
        drop=True)


def simulation_metrics_over_seeds(sens: pd.DataFrame, mixed: pd.DataFrame, sources: str,
                                  slo_endpoints: Sequence[str] = ("1.2", "2"),
                                  window_note: str = "",
                                  metrics: Collection[str] | None = None
                                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The simulation metrics file and its per-seed file: :func:`simulation_metrics` of
    each seed's rows alone (a replay the seed does not change is copied to every seed by
    the sweeps' tables), and the metrics with each value the mean of its per-seed values
    (:mod:`rollmux.experiments.intervals`). ``metrics``: as in :func:`simulation_metrics`
    (each kept metric's rows are those of the whole file)."""
    from rollmux.experiments.intervals import mean_over_seeds, per_seed_metrics

    def build(s: pd.DataFrame, m: pd.DataFrame) -> pd.DataFrame:
        return simulation_metrics(s, m, sources, slo_endpoints=slo_endpoints,
                                  window_note=window_note, metrics=metrics)

    per_seed = per_seed_metrics(
        lambda seed: build(sens[sens["seed"] == seed], mixed[mixed["seed"] == seed]),
        sorted(int(s) for s in sens["seed"].unique()))
    return mean_over_seeds(build(sens, mixed), per_seed), per_seed


#: The metrics of :func:`simulation_metrics` normalised by the optimum: metric -> the
#: table it reads (``sensitivity`` or ``mixed``) and the setting kind whose settings it
#: spans (None: every row of the table).
OPTIMUM_NORMALISED: dict[str, tuple[str, str | None]] = {
    "cost_over_opt_rollmux_by_workload": ("sensitivity", "workload"),
    "cost_over_opt_random_by_workload": ("sensitivity", "workload"),
    "cost_over_opt_greedy_by_workload": ("sensitivity", "workload"),
    "cost_over_opt_baselines_by_slo": ("sensitivity", "slo"),
    "cost_over_opt_baselines_by_groupsize": ("sensitivity", "maxgroup"),
    "cost_over_opt_rollmux_mixed": ("mixed", None),
    "cost_over_opt_random_mixed": ("mixed", None),
    "cost_over_opt_greedy_mixed": ("mixed", None),
}


def simulation_gaps(sens: pd.DataFrame, mixed: pd.DataFrame, sources: str,
                    reference: str = "optimal") -> pd.DataFrame:
    """The certified gap of the optimum behind each optimum-normalised metric
    (:data:`OPTIMUM_NORMALISED`; rows of :mod:`rollmux.experiments.optimum_gaps`).

    Each metric takes the ``reference_gap`` of every (setting, seed) it spans: one
    reading per reference replay and seed. A table without ``reference_gap`` (written
    before the gaps) reads as unbounded. ValueError when a metric spans no row.
    """
    tables = {"sensitivity": sens, "mixed": mixed}
    rows = []
    for metric, (name, kind) in OPTIMUM_NORMALISED.items():
        part = tables[name]
        if kind is not None:
            part = part[part["kind"] == kind]
        readings = part.drop_duplicates(subset=["trace", "slo", "maxgroup", "seed"])
        if not len(readings):
            raise ValueError(f"{metric}: no {name} rows" + (f" of kind {kind!r}" if kind
                                                            else ""))
        gaps = (readings["reference_gap"] if "reference_gap" in readings.columns
                else pd.Series([math.nan] * len(readings)))
        rows.append(gap_row(metric, reference, gaps.tolist(), sources))
    return gap_frame(rows)
