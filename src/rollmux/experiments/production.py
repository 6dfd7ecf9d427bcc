"""Production trace replay (paper sec. 6.4, Fig. 14): the claims metrics of the replays.

The replays themselves are the sweeps of :mod:`rollmux.sim.sweeps` (the pipeline's
``sim_production`` rule collects them into ``results/sim/production.csv``);
:func:`production_metrics` turns that table into the rows of
``results/metrics/production.csv`` (claims C01-C13, C56; the contract:
:mod:`rollmux.experiments.metrics`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.experiments.metrics import BESIDE_READING, metric_row, metrics_frame, with_reading
from rollmux.sim.metrics import bubble_reduction, bubble_reduction_pp

__all__ = ["mean_by_policy", "production_metrics"]


def mean_by_policy(frame: pd.DataFrame, column: str) -> dict[str, float]:
    """Mean of ``column`` per policy (over seeds)."""
    return {str(p): float(v) for p, v in frame.groupby("policy")[column].mean().items()}


def production_metrics(prod: pd.DataFrame, source: str) -> pd.DataFrame:
    """Claims C01-C13 and C56 from the production replay table (means over seeds).

    Needs the policies rollmux, solo-d and verl in ``prod`` (one trace). Cost ratios are
    total costs of the whole trace and hourly costs are total costs over the trace's span
    (Solo-D's: every job at its solo speed), as the paper's "$510/hr (total: $188.8k)" and
    "reduces total provisioning cost by 1.84x" read; the time averages over each policy's
    own span are in the notes. Bubble reductions are bubble-fraction drops in percentage
    points, the relative idle-time reductions in the notes (docs/metrics.md).
    """
    for policy in ("rollmux", "solo-d", "verl"):
        if policy not in set(prod["policy"]):
            raise ValueError(f"production table has no {policy!r} replay")
    own = mean_by_policy(prod, "cost_usd_per_h")
    total = mean_by_policy(prod, "total_cost_usd")
    own_span_h = mean_by_policy(prod, "span_h")
    span_h = own_span_h["solo-d"]
    cost = {p: total[p] / span_h for p in total}
    slo = mean_by_policy(prod, "slo_attainment_realised")
    slo_reference = mean_by_policy(prod, "slo_attainment_reference")
    slo_planned = mean_by_policy(prod, "slo_attainment_planned")
    h20 = mean_by_policy(prod, "peak_gpus_H20")
    h800 = mean_by_policy(prod, "peak_gpus_H800")
    shares = {s: mean_by_policy(prod, f"share_{s}")["rollmux"]
              for s in ("direct_packing", "rollout_scaling", "new_group")}
    relative, points = [], []
    for seed in sorted(set(prod["seed"])):
        by = prod[prod["seed"] == seed].set_index("policy")
        pools = ("rollout", "train")
        idle = {p: by.loc["rollmux", f"idle_gpu_h_{p}"] for p in pools}
        base = {p: by.loc["solo-d", f"idle_gpu_h_{p}"] for p in pools}
        relative.append(bubble_reduction(idle, base))
        points.append(bubble_reduction_pp(
            {p: by.loc["rollmux", f"bubble_fraction_{p}"] for p in pools},
            {p: by.loc["solo-d", f"bubble_fraction_{p}"] for p in pools}))
    rel = {p: -100.0 * float(np.mean([r[p] for r in relative])) for p in ("rollout", "train")}
    pp = {p: 100.0 * float(np.mean([r[p] for r in points])) for p in ("rollout", "train")}
    trace = str(prod["trace"].iloc[0])
    seeds = f"{len(set(prod['seed']))} seed(s)"
    on = f"on {trace}, mean over {seeds}"
    span = f"the trace's span (Solo-D's, {span_h:.4g} h)"

    def ratio_note(base: str, name: str) -> str:
        return (f"total cost {name} / RollMux over the whole trace (time-average over each "
                f"policy's own span: {own[base] / own['rollmux']:.4g}) {on}")

    def hourly_note(policy: str) -> str:
        return (f"total cost / {span} (over its own span {own_span_h[policy]:.4g} h: "
                f"{own[policy]:.4g}) {on}")

    def bubble_note(pool: str, name: str) -> str:
        return (f"Solo-D bubble fraction - RollMux's, {name} pool, in percentage points "
                f"(relative drop of idle GPU-h: {rel[pool]:.4g}%) {on}")

    rows = [
        metric_row("cost_ratio_solod_over_rollmux", source, ratio_note("solo-d", "Solo-D"),
                total["solo-d"] / total["rollmux"]),
        metric_row("cost_ratio_verl_over_rollmux", source, ratio_note("verl", "veRL"),
                total["verl"] / total["rollmux"]),
        metric_row("slo_attainment_rollmux", source,
                f"share of the trace's jobs completed within their SLO, realised reading "
                f"(realised over solo on the same draws; planned reading "
                f"{100.0 * slo_planned['rollmux']:.4g}%) {on}",
                100.0 * slo["rollmux"]),
        metric_row(with_reading("slo_attainment_rollmux", BESIDE_READING), source,
                f"the same, paper-reference reading (realised over the worst-case solo "
                f"estimate) {on}", 100.0 * slo_reference["rollmux"]),
        metric_row("cost_per_hour_rollmux", source, hourly_note("rollmux"),
                cost["rollmux"]),
        metric_row("cost_per_hour_solod", source, hourly_note("solo-d"), cost["solo-d"]),
        metric_row("cost_per_hour_verl", source, hourly_note("verl"), cost["verl"]),
        metric_row("admission_direct_packing", source,
                f"RollMux first arrivals admitted by direct packing / all admitted {on}",
                100.0 * shares["direct_packing"]),
        metric_row("admission_rollout_scaling", source,
                f"RollMux first arrivals admitted by rollout scaling / all admitted {on}",
                100.0 * shares["rollout_scaling"]),
        metric_row("admission_new_group", source,
                f"RollMux first arrivals opening a new group / all admitted {on}",
                100.0 * shares["new_group"]),
        metric_row("bubble_reduction_rollout", source, bubble_note("rollout", "rollout"),
                pp["rollout"]),
        metric_row("bubble_reduction_training", source, bubble_note("train", "training"),
                pp["train"]),
        metric_row("peak_h800_ratio", source,
                f"max(Solo-D, veRL) peak H800 / RollMux peak H800 (Solo-D "
                f"{h800['solo-d']:g}, veRL {h800['verl']:g}, RollMux {h800['rollmux']:g}) "
                f"{on}", max(h800["solo-d"], h800["verl"]) / h800["rollmux"]),
        metric_row("peak_h20_ratio", source,
                f"Solo-D peak H20 / RollMux peak H20 (Solo-D {h20['solo-d']:g}, RollMux "
                f"{h20['rollmux']:g}) {on}", h20["solo-d"] / h20["rollmux"]),
        metric_row("solod_vs_verl_cost", source,
                f"Solo-D total cost / {span} / 1000 (veRL {cost['verl'] / 1000:.3g}) {on}",
                cost["solo-d"] / 1000.0),
    ]
    return metrics_frame(rows, "production")
