"""Evidence for the production claims (§6.4, C01-C13): why ours differ, in numbers.

Three experiments over the production replays (``results/sim/production.csv``, the fluid
bound ``results/sim/fluid.csv``) and the paper's own numbers (the claims ledger):

* :func:`bubble_readings` (C10-C13, and C01): the paper's "reducing dependency bubbles by
  24.4% on the rollout cluster and 43.1% on the training cluster" read as a relative drop
  of idle GPU-hours and as a drop of the bubble fraction in percentage points. With the
  same useful work under Solo-D and RollMux and Solo-D on 1:1 GPUs, each reading fixes
  RollMux's GPU-hours per pool as a function of Solo-D's utilisation, hence the cost ratio
  and the GPU reductions the paper's other numbers state (:func:`implied_gpu_hour_ratios`).
  The relative reading caps the cost ratio below the paper's 1.84x for every utilisation;
  the percentage-point reading reaches it at a rollout utilisation inside the feasible
  range, with GPU-hour reductions next to the paper's peak reductions. The same formulas
  applied to our replays reproduce our own cost ratio (a check of the derivation).
* :func:`production_cost_bound` (C01, C02, C04): each policy's total cost against the
  fluid lower bound of the trace's work, and the cost-weighted utilisation RollMux would
  need for the paper's ratios on our trace.
* :func:`admission_sensitivity` (C07-C09): RollMux's admission mix on the production trace
  under other SLO settings and group-size limits (replays of the pipeline).

Definitions: docs/metrics.md ("Busy time and bubbles", "Cost ratio", "Evidence").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from rollmux.experiments.evidence import EVIDENCE_COLUMNS, evidence_row

__all__ = [
    "ImpliedRatios",
    "admission_sensitivity",
    "bubble_readings",
    "implied_gpu_hour_ratios",
    "production_cost_bound",
    "solve_points_utilisation",
]

#: The two readings of the paper's bubble reductions.
READINGS = ("relative", "points")
_READING_TEXT = {
    "relative": "relative drop of idle GPU-h",
    "points": "Solo-D bubble fraction - RollMux's, in percentage points",
}


# --------------------------------------------------------------------------- bubbles


@dataclass(frozen=True, slots=True)
class ImpliedRatios:
    """RollMux's GPU-hours per pool over Solo-D's, and Solo-D's cost over RollMux's."""

    rollout: float
    train: float
    cost_ratio: float


def implied_gpu_hour_ratios(
    reading: str,
    reduction_rollout: float,
    reduction_train: float,
    util_rollout: float,
    util_train: float,
    price_rollout: float,
    price_train: float,
) -> ImpliedRatios:
    """What a bubble reduction implies for RollMux's GPU-hours, given Solo-D's utilisations.

    Same useful work ``W_P`` under both policies, Solo-D provisioning ``G`` GPU-hours in
    each pool (1:1 GPUs), utilisation ``u_P = W_P / G``. Reductions are fractions.
    ``relative``: RollMux's idle GPU-hours are ``(1 - r_P)`` times Solo-D's, so
    ``G_P / G = 1 - r_P (1 - u_P)``. ``points``: RollMux's bubble fraction is Solo-D's
    minus ``d_P``, so ``G_P / G = u_P / (u_P + d_P)``. The cost ratio prices each pool's
    GPU-hours: ``(p_R + p_T) / (p_R G_R/G + p_T G_T/G)``.
    """
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    for name, u in (("util_rollout", util_rollout), ("util_train", util_train)):
        if not 0.0 <= u <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {u!r}")

    def pool(r: float, u: float) -> float:
        return 1.0 - r * (1.0 - u) if reading == "relative" else u / (u + r)

    rollout, train = pool(reduction_rollout, util_rollout), pool(reduction_train, util_train)
    cost = (price_rollout + price_train) / (price_rollout * rollout + price_train * train)
    return ImpliedRatios(rollout=rollout, train=train, cost_ratio=cost)


def solve_points_utilisation(
    reduction_rollout: float,
    reduction_train: float,
    price_rollout: float,
    price_train: float,
    cost_ratio: float,
) -> float | None:
    """Solo-D rollout utilisation ``s`` at which the points reading gives ``cost_ratio``.

    Solo-D's pools alternate (``u_T = 1 - s``, sync and switches neglected) and neither
    RollMux bubble fraction may go negative (``d_R <= 1 - s``, ``d_T <= s``). The smallest
    root in that interval, or None when there is none.
    """
    lo, hi = reduction_train, 1.0 - reduction_rollout
    if lo >= hi:
        return None

    def gap(s: float) -> float:
        return (
            implied_gpu_hour_ratios(
                "points", reduction_rollout, reduction_train, s, 1.0 - s, price_rollout, price_train
            ).cost_ratio
            - cost_ratio
        )

    return _first_root(gap, lo, hi)


def _first_root(
    f: Callable[[float], float], lo: float, hi: float, steps: int = 400
) -> float | None:
    """Smallest root of ``f`` on [lo, hi] (sign change on a grid, then brentq)."""
    grid = np.linspace(lo, hi, steps + 1)
    values = [f(float(x)) for x in grid]
    for a, b, fa, fb in zip(grid[:-1], grid[1:], values[:-1], values[1:], strict=True):
        if fa == 0.0:
            return float(a)
        if fa * fb < 0.0:
            return float(brentq(f, float(a), float(b), xtol=1e-12))
    return float(grid[-1]) if values[-1] == 0.0 else None


def _policy_means(prod: pd.DataFrame) -> pd.DataFrame:
    """Production table averaged over seeds, one row per policy."""
    return prod.groupby("policy").mean(numeric_only=True)


def bubble_readings(
    prod: pd.DataFrame, paper: Mapping[str, float], price_rollout: float, price_train: float
) -> pd.DataFrame:
    """C10-C13 (and C01): the two readings of the bubble reductions, the paper's and ours.

    ``paper`` holds the paper's C01, C10, C11, C12, C13 (C10/C11 in %). ``prod`` is the
    production replay table (rollmux and solo-d rows with ``bubble_fraction_*``,
    ``idle_gpu_h_*``, ``total_cost_usd``, ``peak_gpus_*``).
    """
    d_r, d_t = paper["C10"] / 100.0, paper["C11"] / 100.0
    rows = []
    # The paper's numbers under each reading.
    # G_P / G = 1 - r_P (1 - u_P) falls as Solo-D's utilisation falls: the cap is at u = 0.
    rel_cap = implied_gpu_hour_ratios("relative", d_r, d_t, 0.0, 0.0, price_rollout, price_train)
    rows += [
        evidence_row(
            "C01",
            "largest_cost_ratio_solod_over_rollmux",
            "relative",
            paper["C01"],
            implied=rel_cap.cost_ratio,
            holds=rel_cap.cost_ratio >= paper["C01"],
            note="relative reading: RollMux keeps (1 - r) of Solo-D's idle GPU-h, so it "
            "costs at least the priced (1 - r) share of Solo-D's GPU-h whatever "
            "Solo-D's utilisation; the paper's cost ratio must not exceed this",
        ),
        evidence_row(
            "C13",
            "largest_h20_gpu_h_reduction",
            "relative",
            paper["C13"],
            implied=1.0 / rel_cap.rollout,
            holds=1.0 / rel_cap.rollout >= paper["C13"],
            note="relative reading: Solo-D / RollMux rollout GPU-h is at most 1/(1 - r); "
            "the paper's value is a peak ratio",
        ),
        evidence_row(
            "C12",
            "largest_h800_gpu_h_reduction",
            "relative",
            paper["C12"],
            implied=1.0 / rel_cap.train,
            holds=1.0 / rel_cap.train >= paper["C12"],
            note="relative reading: Solo-D / RollMux training GPU-h is at most 1/(1 - r); "
            "the paper's value is a peak ratio",
        ),
    ]
    s = solve_points_utilisation(d_r, d_t, price_rollout, price_train, paper["C01"])
    rows.append(
        evidence_row(
            "C01",
            "solod_rollout_utilisation_for_cost_ratio",
            "points",
            paper["C01"],
            implied=s,
            holds=s is not None,
            note="points reading: Solo-D rollout utilisation s (training 1 - s) at "
            "which the paper's bubble drops give its cost ratio; feasible "
            f"range [{d_t:g}, {1 - d_r:g}] (no negative bubble)",
        )
    )
    if s is not None:
        at = implied_gpu_hour_ratios("points", d_r, d_t, s, 1.0 - s, price_rollout, price_train)
        rows += [
            evidence_row(
                "C13",
                "h20_gpu_h_reduction_at_s",
                "points",
                paper["C13"],
                implied=1.0 / at.rollout,
                holds=abs(at.rollout * paper["C13"] - 1.0) <= 0.1,
                note="points reading at that s: Solo-D / RollMux rollout GPU-h, beside the "
                "paper's peak ratio (holds: within 10%)",
            ),
            evidence_row(
                "C12",
                "h800_gpu_h_reduction_at_s",
                "points",
                paper["C12"],
                implied=1.0 / at.train,
                holds=abs(at.train * paper["C12"] - 1.0) <= 0.1,
                note="points reading at that s: Solo-D / RollMux training GPU-h, beside "
                "the paper's peak ratio (holds: within 10%)",
            ),
        ]
    # Ours under each reading, and the derivation checked on our own replays.
    by = _policy_means(prod)
    mine, base = by.loc["rollmux"], by.loc["solo-d"]
    util: dict[str, float] = {}
    gpu_h: dict[str, float] = {}
    reductions: dict[str, dict[str, float]] = {"relative": {}, "points": {}}
    for pool, claim, name in (("rollout", "C10", "rollout"), ("train", "C11", "training")):
        b_m, b_s = float(mine[f"bubble_fraction_{pool}"]), float(base[f"bubble_fraction_{pool}"])
        i_m, i_s = float(mine[f"idle_gpu_h_{pool}"]), float(base[f"idle_gpu_h_{pool}"])
        util[pool] = 1.0 - b_s
        gpu_h[pool] = (i_m / b_m) / (i_s / b_s)
        reductions["relative"][pool] = (i_s - i_m) / i_s
        reductions["points"][pool] = b_s - b_m
        for reading in READINGS:
            rows.append(
                evidence_row(
                    claim,
                    f"bubble_reduction_{name}",
                    reading,
                    paper[claim],
                    ours=100.0 * reductions[reading][pool],
                    note=f"ours in %: {_READING_TEXT[reading]}",
                )
            )
        rows.append(
            evidence_row(
                claim,
                f"solod_utilisation_{name}",
                "",
                ours=util[pool],
                note="Solo-D's useful GPU-h / provisioned GPU-h in our replay",
            )
        )
    for pool, claim, quantity in (
        ("rollout", "C13", "h20_gpu_h_reduction"),
        ("train", "C12", "h800_gpu_h_reduction"),
    ):
        peak = f"peak_gpus_{'H20' if pool == 'rollout' else 'H800'}"
        peak_ratio = float(base[peak]) / float(mine[peak])
        rows.append(
            evidence_row(
                claim,
                quantity,
                "",
                paper[claim],
                ours=1.0 / gpu_h[pool],
                note=f"ours: Solo-D / RollMux provisioned {pool} GPU-h (our peak "
                f"ratio {peak_ratio:.4g})",
            )
        )
    actual = float(base["total_cost_usd"]) / float(mine["total_cost_usd"])
    for reading in READINGS:
        got = implied_gpu_hour_ratios(
            reading,
            reductions[reading]["rollout"],
            reductions[reading]["train"],
            util["rollout"],
            util["train"],
            price_rollout,
            price_train,
        )
        rows.append(
            evidence_row(
                "C01",
                "cost_ratio_from_our_bubbles",
                reading,
                paper["C01"],
                ours=actual,
                implied=got.cost_ratio,
                holds=abs(got.cost_ratio / actual - 1.0) <= 0.02,
                note="the reading's formula on our bubble drops and Solo-D "
                "utilisations against our total-cost ratio (holds: within 2%; "
                "both readings are exact on one replay, the check is of the "
                "derivation)",
            )
        )
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))


# --------------------------------------------------------------------------- cost bound


def production_cost_bound(
    prod: pd.DataFrame, fluid: pd.DataFrame, paper: Mapping[str, float]
) -> pd.DataFrame:
    """C01, C02, C04: costs against the fluid bound of the trace's work, paper vs ours.

    ``fluid`` is ``results/sim/fluid.csv`` restricted to the production trace (rows per
    policy and seed with ``total_cost_usd``, ``fluid_cost_usd``, ``fluid_trace_cost_usd``).
    ``paper`` holds C01, C02, C04, C05, C06. Cost-weighted utilisation = the fluid cost of
    the completed work / total cost (at most 1). The paper's hourly costs are over its
    trace's span; ours are read over our trace's span (Solo-D's), to which our trace is
    fitted (calibration ``production_mix``).
    """
    by = _policy_means(prod)
    fl = fluid.groupby("policy").mean(numeric_only=True)
    span_h = float(by.loc["solo-d", "span_h"])
    bound_usd_per_h = float(fl["fluid_trace_cost_usd"].iloc[0]) / span_h
    rows = [
        evidence_row(
            "C04",
            "fluid_bound_usd_per_h",
            "",
            paper["C04"],
            ours=bound_usd_per_h,
            holds=bound_usd_per_h <= paper["C04"],
            note="the trace's useful work priced at solo speed / the trace's span: no "
            "policy pays less (holds: the paper's RollMux cost is above it)",
        )
    ]
    util = {}
    for policy, claim in (("rollmux", "C04"), ("solo-d", "C05"), ("verl", "C06")):
        util[policy] = float(fl.loc[policy, "fluid_cost_usd"] / fl.loc[policy, "total_cost_usd"])
        hourly = float(by.loc[policy, "total_cost_usd"]) / span_h
        rows.append(
            evidence_row(
                claim,
                f"cost_usd_per_h_{policy}",
                "",
                paper[claim],
                ours=hourly,
                note="total cost / the trace's span",
            )
        )
        rows.append(
            evidence_row(
                claim,
                f"cost_weighted_utilisation_{policy}",
                "",
                ours=util[policy],
                implied=bound_usd_per_h / paper[claim],
                note="fluid cost of the completed work / total cost; implied: our "
                "bound over the paper's hourly cost",
            )
        )
    for claim, base in (("C01", "solo-d"), ("C02", "verl")):
        need = util[base] * paper[claim]
        rows.append(
            evidence_row(
                claim,
                f"rollmux_utilisation_for_paper_ratio_over_{base}",
                "",
                paper[claim],
                ours=util["rollmux"],
                implied=need,
                holds=need <= 1.0,
                note=f"the cost-weighted utilisation RollMux needs for the paper's "
                f"ratio over our {base} (its utilisation x the ratio); holds: "
                "at most 1, possible in our model",
            )
        )
        rows.append(
            evidence_row(
                claim,
                f"largest_ratio_over_{base}",
                "",
                paper[claim],
                ours=float(by.loc[base, "total_cost_usd"] / by.loc["rollmux", "total_cost_usd"]),
                implied=1.0 / util[base],
                holds=1.0 / util[base] >= paper[claim],
                note=f"the largest ratio over our {base} any policy can reach "
                "(its total cost / the fluid bound); ours: our total-cost ratio",
            )
        )
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))


# --------------------------------------------------------------------------- admissions


def admission_sensitivity(
    runs: pd.DataFrame, paper: Mapping[str, float], reference: Mapping[str, object]
) -> pd.DataFrame:
    """C07-C09: RollMux's admission shares per replay setting, beside the paper's.

    ``runs`` is a collected replay table (:func:`rollmux.sim.sweeps.collect_runs`) of
    RollMux on the production trace under several SLO settings and group-size limits;
    ``reference`` the keys (``slo``, ``maxgroup``) of the claims' own setting. One row per
    setting and strategy (means over seeds), with the distance of the three shares from
    the paper's (``l1_pp``: summed absolute differences in percentage points).
    """
    strategies = (("C07", "direct_packing"), ("C08", "rollout_scaling"), ("C09", "new_group"))
    part = runs[runs["policy"] == "rollmux"]
    if not len(part):
        raise ValueError("admission sensitivity needs rollmux replays")
    means = part.groupby(["slo", "maxgroup"], sort=True).mean(numeric_only=True)
    rows = []
    for (slo, group), rec in means.iterrows():
        setting = f"slo={slo}, maxgroup={int(group)}"
        is_ref = str(slo) == str(reference["slo"]) and int(group) == int(
            str(reference["maxgroup"]))
        l1 = 0.0
        for claim, name in strategies:
            share = 100.0 * float(rec[f"share_{name}"])
            l1 += abs(share - paper[claim])
            rows.append(
                evidence_row(
                    claim,
                    f"share_{name}",
                    setting,
                    paper[claim],
                    ours=share,
                    note="the claims' setting" if is_ref else "sensitivity",
                )
            )
        rows.append(
            evidence_row(
                "C07-C09",
                "l1_pp",
                setting,
                ours=l1,
                note="sum of |ours - paper| over the three shares (pp)",
            )
        )
        rows.append(
            evidence_row(
                "C07-C09",
                "slo_attainment",
                setting,
                ours=100.0 * float(rec["slo_attainment"]),
                note="RollMux SLO attainment (%) in that setting",
            )
        )
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
