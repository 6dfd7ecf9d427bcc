"""Fig. 17: cost normalised to hourly optimal regrouping, and SLO attainment, under drift.

Reads results/robustness/drift.csv (``rollmux.experiments.robustness.drift_table``: one row per
drift setting, policy and seed) and draws, per drift setting, the total cost of
completing the trace's work under each compared policy (config robustness.policies:
static RollMux, Random, Most-Idle) over that under the reference (robustness.reference:
``regroup``, hourly optimal regrouping with migration pauses; the dashed line at 1;
``total_cost_over_regroup``, docs/metrics.md "Normalised cost"), and the SLO attainment
of every policy. Bars are means over seeds; whiskers their 95% Student-t interval when
there are several (rollmux.experiments.intervals).

    python analysis/fig17_drift_cost.py --drift results/robustness/drift.csv \
        --policies rollmux random greedy regroup --reference regroup \
        --png figures/fig17_drift_cost.png --pdf figures/fig17_drift_cost.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.experiments.intervals import t_errorbar, whisker_lengths
from rollmux.experiments.robustness import SETTINGS
from rollmux.plotstyle import apply_style, figure_main, legend_below, policy_colour, policy_label

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def seed_stats(drift: pd.DataFrame, column: str) -> pd.DataFrame:
    """Mean of ``column`` over seeds and its 95% Student-t interval (``low``, ``high``),
    per setting and policy."""
    rows = [{"setting": setting, "policy": policy, "mean": float(part.mean()),
             **dict(zip(("low", "high"), t_errorbar(part), strict=True))}
            for (setting, policy), part in drift.groupby(["setting", "policy"])[column]]
    return pd.DataFrame(rows, columns=["setting", "policy", "mean", "low", "high"])


def _bars(ax: plt.Axes, stats: pd.DataFrame, policies: list[str], fmt: str) -> None:
    """Grouped bars per setting (x) and policy, labelled with their values."""
    settings = [s for s in SETTINGS if s in set(stats["setting"])]
    x = np.arange(len(settings))
    width = 0.8 / len(policies)
    for k, policy in enumerate(policies):
        part = stats[stats["policy"] == policy].set_index("setting").reindex(settings)
        mean = part["mean"].to_numpy(dtype=float)
        err = whisker_lengths(mean, list(zip(part["low"], part["high"], strict=True)))
        pos = x + (k - (len(policies) - 1) / 2) * width
        bars = ax.bar(pos, mean, width * 0.92, color=policy_colour(policy),
                      label=policy_label(policy),
                      yerr=err if np.any(err > 0) else None, capsize=2)
        ax.bar_label(bars, labels=[fmt.format(v) for v in mean], fontsize=6.5, padding=1)
    ax.set_xticks(x, settings)


def draw(drift: pd.DataFrame, policies: list[str], reference: str) -> plt.Figure:
    """Normalised cost (left) and SLO attainment (right) per drift setting, ``policies``
    in drawing order, costs over ``reference``'s."""
    apply_style()
    fig, (ax_cost, ax_slo) = plt.subplots(1, 2, figsize=(7.4, 3.0))
    drawn = [p for p in policies if p in set(drift["policy"])]
    baselines = [p for p in drawn if p != reference]
    _bars(ax_cost, seed_stats(drift, "total_cost_over_regroup"), baselines, "{:.2f}")
    ref_line = ax_cost.axhline(1.0, color=policy_colour(reference), linestyle="--",
                               linewidth=1, label=f"{policy_label(reference)} = 1")
    ax_cost.set_ylabel("total cost / regrouping's (x)")
    ax_cost.set_title("(a) normalised cost under drift", loc="left")
    ax_cost.margins(y=0.15)
    _bars(ax_slo, seed_stats(drift, "slo_attainment_realised_pct"), drawn, "{:.0f}")
    ax_slo.set_ylabel("SLO attainment, realised (%)")
    ax_slo.set_ylim(0, 112)
    ax_slo.set_title("(b) SLO attainment", loc="left")
    handles, labels = ax_slo.get_legend_handles_labels()
    handles.append(ref_line)
    labels.append(ref_line.get_label())
    jobs = int(drift["jobs"].max())
    seeds = ", ".join(str(s) for s in sorted(drift["seed"].unique()))
    fig.suptitle(f"{jobs} jobs per replay, replay seeds {seeds}",
                 x=0.99, ha="right", fontsize=7, color="grey")
    legend_below(fig, handles, labels, ncol=3)
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read drift.csv, write PNG and PDF."""
    options = {
        "policies": {"nargs": "+", "required": True,
                     "help": "compared policies in drawing order (robustness.policies)"},
        "reference": {"required": True,
                      "help": "policy the costs are normalised to (robustness.reference)"},
    }
    return figure_main(__doc__, {"drift": "drift.csv"}, draw, argv, options=options)


if __name__ == "__main__":
    raise SystemExit(main())
