"""Fig. 15: sensitivity of cost and SLO attainment to workload, SLO and group-size limit.

Reads results/sim/sensitivity.csv (one row per setting, policy and seed; columns kind,
value, policy, total_cost_over_optimal, slo_attainment, ...) and draws, like the paper's
Fig. 15a-c, one column per sweep (a: workload type BL/RH/TH/Mixed, b: SLO setting,
c: max group size) with two rows: time-average cost normalised to the offline optimum,
and SLO attainment, grouped bars per policy (means over seeds).

    python analysis/fig15_sensitivity.py --table results/sim/sensitivity.csv \
        --policies rollmux,random,greedy \
        --png figures/fig15_sensitivity.png --pdf figures/fig15_sensitivity.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import JOB_COLOURS, apply_style, figure_main

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)

POLICY_LABELS = {"rollmux": "RollMux", "random": "Random", "greedy": "Greedy (Most-Idle)",
                 "optimal": "Optimal", "solo-d": "Solo-D", "verl": "veRL"}
SWEEPS = (("workload", "(a) workload type", "workload"),
          ("slo", "(b) SLO setting", "SLO (max slowdown)"),
          ("maxgroup", "(c) max group size", "max jobs per group"))


def setting_label(kind: str, value: str) -> str:
    """Axis label of a setting: SLO ranges as U(lo,hi), the trace's SLOs as 'trace'."""
    if kind == "slo" and "," in value:
        return f"U({value})"
    return value


def _policy_list(text: str) -> list[str]:
    """``a,b,`` -> ``["a", "b"]``."""
    return [p for p in text.split(",") if p]


def draw(table: pd.DataFrame, policies: list[str]) -> plt.Figure:
    """Two rows (cost over optimal, SLO attainment) x three sweeps of grouped bars."""
    apply_style()
    table = table.assign(value=table["value"].astype(str))
    means = table.groupby(["kind", "value", "policy"], sort=False, as_index=False)[
        ["total_cost_over_optimal", "slo_attainment"]].mean()
    fig, axes = plt.subplots(2, 3, figsize=(9.0, 4.8), sharey="row", squeeze=False)
    width = 0.8 / len(policies)
    for col, (kind, title, xlabel) in enumerate(SWEEPS):
        part = means[means["kind"] == kind]
        values = list(dict.fromkeys(table[table["kind"] == kind]["value"]))
        x = np.arange(len(values))
        for k, policy in enumerate(policies):
            rows = part[part["policy"] == policy].set_index("value").reindex(values)
            offset = (k - (len(policies) - 1) / 2) * width
            colour = JOB_COLOURS[k % len(JOB_COLOURS)]
            label = POLICY_LABELS.get(policy, policy)
            axes[0, col].bar(x + offset, rows["total_cost_over_optimal"], width, color=colour,
                             label=label)
            axes[1, col].bar(x + offset, 100.0 * rows["slo_attainment"], width,
                             color=colour, label=label)
        for row in (0, 1):
            axes[row, col].set_xticks(x, [setting_label(kind, v) for v in values])
        axes[0, col].axhline(1.0, color="grey", lw=0.8, ls="--")
        axes[0, col].set_title(title, loc="left")
        axes[1, col].set_xlabel(xlabel)
        axes[1, col].set_ylim(0, 105)
    axes[0, 0].set_ylabel("total cost / optimal's")
    axes[1, 0].set_ylabel("SLO attainment (%)")
    axes[0, 0].set_ylim(bottom=0)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(policies), frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
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
