"""The metrics contract: every metric behind a claim, the function computing it, its unit.

Every pipeline stage that backs a claim writes ``results/metrics/<stage>.csv`` with the
columns :data:`METRIC_COLUMNS` (workflow/README.md, "Metrics for the claims report"); the
claims report (:mod:`rollmux.experiments.claims`) joins those rows with the ledger on
``metric``. :data:`METRICS` declares, once, each metric's stage, the function that
computes it, its unit and what it measures; the builders take units from it
(:func:`metric_unit`) and check their rows against it (:func:`metrics_frame`), and a test
checks it against the ledger, so a metric cannot change unit or stage silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "ATTAINMENT_METRICS",
    "BESIDE_READING",
    "COMPANION_READINGS",
    "LENGTHS_READING",
    "METRICS",
    "METRIC_COLUMNS",
    "STAGES",
    "STATUS_READING",
    "Metric",
    "companion_error",
    "metric_row",
    "metric_unit",
    "metrics_frame",
    "read_checked_table",
    "split_reading",
    "stage_metrics",
    "with_reading",
]

#: Columns of ``results/metrics/<stage>.csv``, in order.
METRIC_COLUMNS: tuple[str, ...] = ("metric", "value", "low", "high", "unit", "source", "note")

#: The stages writing metrics files, each with the function that builds its rows.
STAGES: dict[str, str] = {
    "production": "rollmux.experiments.production.production_metrics",
    "simulation": "rollmux.experiments.sensitivity.simulation_metrics",
    "robustness": "rollmux.experiments.robustness.robustness_metrics",
    "models": "rollmux.experiments.model_figures.models_metrics",
}


@dataclass(frozen=True)
class Metric:
    """One metric of the contract: the stage whose file holds it, its unit, what it is."""

    stage: str
    unit: str
    note: str

    @property
    def function(self) -> str:
        """The dotted name of the function computing the metric."""
        return STAGES[self.stage]


def _declare(stage: str, unit: str, entries: Mapping[str, str]) -> dict[str, Metric]:
    """Metrics of one stage and unit: name -> what it measures."""
    return {name: Metric(stage, unit, note) for name, note in entries.items()}


#: metric -> stage (and so function), unit, what it measures. Definitions in maths:
#: docs/metrics.md.
METRICS: dict[str, Metric] = {
    # production trace replay (sec. 6.4, Fig. 14)
    **_declare("production", "x", {
        "cost_ratio_solod_over_rollmux": "total cost of Solo-D over RollMux's, whole trace",
        "cost_ratio_verl_over_rollmux": "total cost of veRL over RollMux's, whole trace",
        "peak_h800_ratio": "max(Solo-D, veRL) peak H800 GPUs over RollMux's",
        "peak_h20_ratio": "Solo-D peak H20 GPUs over RollMux's",
    }),
    **_declare("production", "%", {
        "slo_attainment_rollmux": "share of the trace's jobs RollMux completes within SLO",
        "admission_direct_packing": "RollMux first arrivals admitted by direct packing",
        "admission_rollout_scaling": "RollMux first arrivals admitted by rollout scaling",
        "admission_new_group": "RollMux first arrivals opening a new group",
        "bubble_reduction_rollout": "Solo-D minus RollMux bubble fraction, rollout pool (pp)",
        "bubble_reduction_training": "Solo-D minus RollMux bubble fraction, training pool "
                                     "(pp)",
    }),
    **_declare("production", "USD/h", {
        "cost_per_hour_rollmux": "RollMux total cost over the trace's span",
        "cost_per_hour_solod": "Solo-D total cost over the trace's span",
        "cost_per_hour_verl": "veRL total cost over the trace's span",
    }),
    **_declare("production", "kUSD/h", {
        "solod_vs_verl_cost": "Solo-D total cost over the trace's span, in thousands",
    }),
    # micro-benchmarks and ablations (sec. 6.2-6.3), Table 5, Theorem 1, Fig. 4
    **_declare("models", "x", {
        f"throughput_ratio_{scenario}_{base}":
            f"RollMux throughput per USD/h over {name}'s, {scenario} scenario"
        for scenario in ("temporal", "train", "spatial")
        for base, name in (("solod", "Solo-D"), ("gavel", "Gavel+"), ("verl", "veRL"))
    }),
    **_declare("models", "%", {
        "iteration_overhead_vs_solo": "per-iteration time woven over solo, minus 1 (range "
                                      "over Table 4's jobs)",
        "iteration_slowdown_vs_ideal": "per-iteration time woven over ideal all-H800, minus "
                                       "1 (range over Table 4's jobs)",
    }),
    **_declare("models", "x", {
        "migration_speedup": "throughput with over without long-tail migration (range over "
                             "pairs)",
        "sync_speedup_8to8": "flat over topology-aware sync time, 8 -> 8 GPUs (range over "
                             "sizes)",
        "sync_speedup_16to16": "flat over topology-aware sync time, 16 -> 16 GPUs (range over "
                               "sizes)",
        "warm_start_speedup": "largest cold over warm switch latency",
    }),
    **_declare("models", "ms", {
        "decision_latency_2000_jobs": "median RollMux placement decision at 2,000 jobs",
    }),
    **_declare("models", "s", {
        "bruteforce_time_13_jobs": "brute-force optimum wall time at the largest size run",
        "cold_start_seconds": "largest cold-start switch latency",
    }),
    **_declare("models", "bool", {
        "theorem1_holds": "1 if round-robin is optimal on every in-scope instance",
    }),
    # scheduler quality in simulation (sec. 6.5, Fig. 15, 20)
    **_declare("simulation", "x", {
        "cost_over_opt_rollmux_by_workload": "RollMux total cost over optimal's, range over "
                                             "workload types",
        "cost_over_opt_random_by_workload": "Random total cost over optimal's, range over "
                                            "workload types",
        "cost_over_opt_greedy_by_workload": "Greedy total cost over optimal's, range over "
                                            "workload types",
        "cost_over_opt_baselines_by_slo": "Random and Greedy total cost over optimal's, range "
                                          "over SLO settings",
        "cost_over_opt_baselines_by_groupsize": "Random and Greedy total cost over optimal's, "
                                                "range over group-size limits",
        "cost_over_opt_rollmux_mixed": "RollMux total cost over optimal's, mixed workload",
        "cost_over_opt_random_mixed": "Random total cost over optimal's, mixed workload",
        "cost_over_opt_greedy_mixed": "Greedy total cost over optimal's, mixed workload",
    }),
    **_declare("simulation", "%", {
        "slo_random_by_workload": "Random SLO attainment, range over workload types",
        "slo_greedy_by_workload": "Greedy SLO attainment, range over workload types",
        "slo_random_by_slo": "Random SLO attainment, range over the SLO endpoints",
        "slo_greedy_by_slo": "Greedy SLO attainment, range over the SLO endpoints",
        "slo_baselines_by_groupsize": "Random and Greedy SLO attainment, range over "
                                      "group-size limits",
        "slo_rollmux_simulation": "RollMux's lowest SLO attainment over every setting",
        "slo_random_mixed": "Random SLO attainment, mixed workload",
        "slo_greedy_mixed": "Greedy SLO attainment, mixed workload",
    }),
    **_declare("simulation", "GPUs", {
        "peak_gpus_rollmux_mixed": "RollMux peak provisioned GPUs (H20 + H800), mixed "
                                   "workload",
    }),
    # robustness under drift (sec. 6.6, Fig. 17, 18)
    **_declare("robustness", "x", {
        "cost_over_regroup_increasing": "static RollMux cost over hourly regrouping's, "
                                        "increasing drift",
        "cost_over_regroup_decreasing": "static RollMux cost over hourly regrouping's, "
                                        "decreasing drift",
        "cost_over_regroup_mixed": "static RollMux cost over hourly regrouping's, mixed "
                                   "drift",
        "cost_over_regroup_baselines": "Random and Most-Idle cost over regrouping's, range "
                                       "over drift settings",
    }),
    **_declare("robustness", "%", {
        "slo_rollmux_drift": "static RollMux SLO attainment, range over drift settings",
        "rollout_util_deficit_vs_regroup": "largest regroup minus static RollMux rollout "
                                           "utilisation (pp)",
    }),
}


#: SLO attainment metrics (issue 19 item 2, docs/metrics.md "SLO readings"): the row's value
#: is the realised reading (:data:`STATUS_READING`, the claim's status comes from it) and a
#: companion row ``<metric>@reference`` (:func:`with_reading`) carries the paper-reference
#: reading (:data:`BESIDE_READING`), shown beside it in the claims report.
ATTAINMENT_METRICS: frozenset[str] = frozenset({
    "slo_attainment_rollmux", "slo_random_by_workload", "slo_greedy_by_workload",
    "slo_random_by_slo", "slo_greedy_by_slo", "slo_baselines_by_groupsize",
    "slo_rollmux_simulation", "slo_random_mixed", "slo_greedy_mixed", "slo_rollmux_drift",
})
#: The SLO reading an attainment claim takes its status from, and the one shown beside it.
STATUS_READING = "realised"
BESIDE_READING = "reference"
#: The production replays again with response lengths from real runs (config
#: ``lengths.path``, ``simulate --lengths``; issue 19): companion rows
#: ``<metric>@real-lengths`` of every production metric, shown beside the lognormal value
#: in the claims report (docs/metrics.md, "Real response lengths").
LENGTHS_READING = "real-lengths"
#: Companion readings -> the metrics that may carry one.
COMPANION_READINGS: dict[str, str] = {
    BESIDE_READING: "an SLO attainment metric (ATTAINMENT_METRICS)",
    LENGTHS_READING: "a production metric (stage 'production')",
}
_READING_SEPARATOR = "@"


def companion_error(metric: str, reading: str) -> str:
    """Why ``metric@reading`` is not an allowed companion row ('' when it is).

    ``@reference``: the paper-reference reading of an SLO attainment metric;
    ``@real-lengths``: a production metric replayed with real response lengths.
    """
    if reading == BESIDE_READING and metric in ATTAINMENT_METRICS:
        return ""
    if reading == LENGTHS_READING and metric in METRICS \
            and METRICS[metric].stage == "production":
        return ""
    allowed = "; ".join(f"{r!r} for {what}" for r, what in COMPANION_READINGS.items())
    return (f"metric {metric!r}: no companion row under reading {reading!r} (allowed: "
            f"{allowed})")


def with_reading(metric: str, reading: str) -> str:
    """The name of ``metric``'s companion row under ``reading`` (``metric@reading``)."""
    return f"{metric}{_READING_SEPARATOR}{reading}"


def split_reading(name: str) -> tuple[str, str]:
    """(metric, reading) of a metrics row's name; reading ``""`` for a plain metric."""
    metric, _, reading = name.partition(_READING_SEPARATOR)
    return metric, reading


def metric_unit(metric: str) -> str:
    """The unit of ``metric`` in the contract; ValueError naming an undeclared metric."""
    metric, reading = split_reading(metric)
    if metric not in METRICS:
        raise ValueError(f"metric {metric!r} is not declared in rollmux.experiments.metrics")
    if reading and companion_error(metric, reading):
        raise ValueError(companion_error(metric, reading))
    return METRICS[metric].unit


def stage_metrics(stage: str) -> list[str]:
    """The metrics of one stage, in declaration order."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r} (valid: {', '.join(STAGES)})")
    return [name for name, spec in METRICS.items() if spec.stage == stage]


def metrics_frame(rows: Iterable[Mapping[str, Any]], stage: str) -> pd.DataFrame:
    """Rows of one stage's metrics file as a frame, each checked against the contract.

    ValueError when a row's metric is undeclared, belongs to another stage or carries
    another unit than the declared one.
    """
    rows = list(rows)
    for row in rows:
        name = str(row["metric"])
        unit = metric_unit(name)
        name = split_reading(name)[0]
        if METRICS[name].stage != stage:
            raise ValueError(f"metric {name!r} belongs to stage {METRICS[name].stage!r}, "
                             f"not {stage!r}")
        if row["unit"] != unit:
            raise ValueError(f"metric {name!r}: unit {row['unit']!r}, declared {unit!r}")
    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS))


def metric_row(metric: str, source: str, note: str, value: float | None = None,
               low: float | None = None, high: float | None = None) -> dict[str, Any]:
    """One row of a metrics file, its unit from the contract; numbers rounded to 6
    significant digits, missing ones empty."""
    def fmt(x: float | None) -> Any:
        return "" if x is None or not math.isfinite(x) else float(f"{x:.6g}")
    return {"metric": metric, "value": fmt(value), "low": fmt(low), "high": fmt(high),
            "unit": metric_unit(metric), "source": source, "note": note}


def read_checked_table(path: str | Path, columns: Sequence[str],
                       problems: list[str]) -> pd.DataFrame | None:
    """``path`` as a table of strings whose header is exactly ``columns``; None (with one
    located line appended to ``problems``) when it is missing, unreadable or has another
    header."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        problems.append(f"{path}: no such file")
        return None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as exc:
        problems.append(f"{path}: not a readable CSV file ({exc})")
        return None
    if tuple(table.columns) != tuple(columns):
        problems.append(f"{path}:1: header {','.join(table.columns)} must be exactly "
                        f"{','.join(columns)}")
        return None
    return table
