"""Fig. 15: sensitivity of cost and SLO attainment to workload, SLO and group-size limit.

Reads results/sim/sensitivity.csv (one row per setting, policy and seed; columns kind,
value, policy, total_cost_over_optimal, slo_attainment, ...) and draws, like the paper's
Fig. 15a-c, one column per sweep (a: workload type BL/RH/TH/Mixed, b: SLO setting,
c: max group size) with two rows: time-average cost normalised to the offline optimum,
and SLO attainment, grouped bars per policy (means over seeds, whiskers their 95%
Student-t interval: rollmux.experiments.intervals).

    python analysis/fig15_sensitivity.py --table results/sim/sensitivity.csv \
        --policies rollmux,random,greedy \
        --png figures/fig15_sensitivity.png --pdf figures/fig15_sensitivity.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.experiments.intervals import t_errorbar
from rollmux.plotstyle import apply_style, figure_main, legend_below, policy_label, policy_palette

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)
import seaborn as sns  # isort: skip

SWEEPS = (("workload", "(a) workload type", "workload"),
          ("slo", "(b) SLO setting", "SLO (max slowdown)"),
          ("maxgroup", "(c) max group size", "max jobs per group"))
#: The two rows of the grid: column of the table, its scale, the row's axis label.
METRICS = (("total_cost_over_optimal", 1.0, "total cost / optimal's"),
           ("slo_attainment_realised", 100.0, "SLO attainment, realised (%)"))


def setting_label(kind: str, value: str) -> str:
    """Axis label of a setting: SLO ranges as U(lo,hi), the trace's SLOs as 'trace'."""
    if kind == "slo" and "," in value:
        return f"U({value})"
    return value


def _policy_list(text: str) -> list[str]:
    """``a,b,`` -> ``["a", "b"]``."""
    return [p for p in text.split(",") if p]


def draw(table: pd.DataFrame, policies: list[str]) -> plt.Figure:
    """A facet grid: two rows (cost over optimal, SLO attainment) x three sweeps.

    Bars are means over seeds, whiskers their 95% Student-t interval (:func:`t_errorbar`;
    none with one seed).
    """
    apply_style()
    table = table.assign(value=table["value"].astype(str))
    table = table[table["policy"].isin(policies)].assign(
        label=lambda t: t["policy"].map(policy_label))
    labels = [policy_label(p) for p in policies]
    palette = policy_palette(policies, by="label")
    fig, axes = plt.subplots(2, 3, figsize=(9.0, 4.8), sharey="row", squeeze=False)
    for col, (kind, title, xlabel) in enumerate(SWEEPS):
        part = table[table["kind"] == kind]
        values = list(dict.fromkeys(part["value"]))
        part = part.assign(setting=[setting_label(kind, v) for v in part["value"]])
        order = [setting_label(kind, v) for v in values]
        for row, (column, scale, ylabel) in enumerate(METRICS):
            ax = axes[row, col]
            sns.barplot(data=part.assign(y=scale * part[column]), x="setting", y="y",
                        hue="label", order=order, hue_order=labels, palette=palette,
                        estimator="mean", errorbar=t_errorbar, err_kws={"linewidth": 0.8},
                        capsize=0.1, ax=ax, legend=False,
                        # seaborn desaturates to 0.75 by default: RollMux's blue would no
                        # longer be the blue of its legend and of every other figure
                        saturation=1.0)
            ax.set_xlabel(xlabel if row == 1 else "")
            ax.set_ylabel(ylabel if col == 0 else "")
        axes[0, col].axhline(1.0, color="grey", lw=0.8, ls="--")
        axes[0, col].set_title(title, loc="left")
        axes[1, col].set_ylim(0, 105)
    axes[0, 0].set_ylim(bottom=0)
    handles = [plt.Rectangle((0, 0), 1, 1, color=palette[label]) for label in labels]
    legend_below(fig, handles, labels, ncol=len(labels))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the table, write PNG and PDF."""
    policies = {"default": "rollmux,random,greedy", "type": _policy_list,
                "help": "comma-separated policies to draw"}
    return figure_main(
        __doc__, {"table": "sensitivity.csv"}, draw, argv,
        read=lambda path: pd.read_csv(path, dtype={"value": str, "slo": str}),
        options={"policies": policies},
    )


if __name__ == "__main__":
    raise SystemExit(main())
