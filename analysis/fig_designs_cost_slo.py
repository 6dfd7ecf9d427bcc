"""Designs beyond the paper: cost per unit of work against realised SLO attainment.

Reads rule designs_comparison's table (results/designs/comparison.csv,
``rollmux.experiments.designs``: one row per replay) and draws one point per design and
trace: x the realised SLO attainment (each job's slowdown against its realised solo
time, docs/metrics.md), y the cost per unit of work (USD per solo-equivalent job-hour);
colour the design, marker the trace (hollow: real response lengths); the optimum, where
it runs, at steady-state progress (labelled so). Lower right is better.

    python analysis/fig_designs_cost_slo.py --table results/designs/comparison.csv \
        --png figures/designs_cost_slo.png --pdf figures/designs_cost_slo.pdf
"""

from __future__ import annotations

import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, policy_colour, policy_label

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)
from matplotlib.lines import Line2D  # isort: skip

MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def draw(table: pd.DataFrame) -> plt.Figure:
    """One point per (design, trace, lengths); legends for designs and traces."""
    apply_style()
    table = table.fillna({"lengths": ""})
    means = table.groupby(["trace", "lengths", "policy"], sort=False).mean(numeric_only=True)
    traces = list(dict.fromkeys(table["trace"]))
    policies = list(dict.fromkeys(table["policy"]))
    marker = {t: MARKERS[k % len(MARKERS)] for k, t in enumerate(traces)}
    # Designs that coincide (timeslice with nobody to share with is veRL) stay visible:
    # later designs are drawn smaller, on top.
    size = {p: 110.0 - 70.0 * k / max(1, len(policies) - 1) for k, p in enumerate(policies)}
    fig, ax = plt.subplots(figsize=(8.6, 4.2))
    for (trace, lengths, policy), rec in means.iterrows():
        colour = policy_colour(str(policy))
        ax.scatter(100.0 * rec.slo_attainment_realised, rec.cost_per_work_usd,
                   marker=marker[str(trace)], s=size[str(policy)], zorder=3,
                   facecolor="none" if lengths else colour, edgecolor=colour, linewidth=1.3)
    ax.set_xlabel("realised SLO attainment (%)")
    ax.set_ylabel("cost per unit of work\n(USD per solo-equivalent job-hour)")
    # A design replayed at steady-state progress (the optimum, as the sensitivity sweeps'
    # reference) says so in its label.
    steady = (set(table.loc[table["fidelity"] == "analytic", "policy"])
              if "fidelity" in table else set())
    design_handles = [Line2D([], [], linestyle="", marker="o", color=policy_colour(p),
                             label=policy_label(p) + (" (steady state)" if p in steady else ""))
                      for p in policies]
    trace_handles = [Line2D([], [], linestyle="", marker=marker[t], color="grey", label=t)
                     for t in traces]
    if (table["lengths"] != "").any():
        trace_handles.append(Line2D([], [], linestyle="", marker="o", markerfacecolor="none",
                                    color="grey", label="real response lengths"))
    fig.legend(handles=design_handles + trace_handles, loc="center right", frameon=False,
               fontsize=7)
    fig.tight_layout(rect=(0, 0, 0.7, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the comparison table, write PNG and PDF."""
    return figure_main(__doc__, {"table": "comparison CSV (results/designs/comparison.csv)"},
                       draw, argv, read=lambda p: pd.read_csv(p, keep_default_na=False,
                                                              na_values=["nan", "NaN"]),
                       note=lambda table: f"{len(table)} replays")


if __name__ == "__main__":
    raise SystemExit(main())
