"""Fig. 20: mixed workload: cost over time and SLO attainment of each policy vs optimal.

Reads results/sim/mixed.csv (one row per policy and seed of the default simulation
setting: Mixed workload, the trace's SLOs, group size 5; columns cost_usd_per_h,
total_cost_over_optimal, slo_attainment, peak_gpus_total, ...) and
results/sim/mixed_timeseries.csv, and draws (a) each policy's hourly cost over time
(first seed) and (b) the total cost normalised to the optimum's (docs/metrics.md, "Cost
ratio") and (c) the SLO
attainment, means over seeds with their 95% Student-t interval, like the paper's Fig. 20.

    python analysis/fig20_mixed.py --table results/sim/mixed.csv \
        --timeseries results/sim/mixed_timeseries.csv \
        --png figures/fig20_mixed.png --pdf figures/fig20_mixed.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.experiments.intervals import t_errorbar, whisker_lengths
from rollmux.plotstyle import (
    apply_style,
    figure_main,
    ordered_policies,
    policy_colour,
    policy_label,
)

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)



def draw(table: pd.DataFrame, timeseries: pd.DataFrame) -> plt.Figure:
    """Cost over time (left, wide) and bars of cost / optimal and SLO attainment."""
    apply_style()
    policies = ordered_policies(table["policy"])
    means = table.groupby("policy")[["cost_usd_per_h", "total_cost_over_optimal",
                                     "slo_attainment_realised", "peak_gpus_total"]].mean()
    fig = plt.figure(figsize=(9.0, 3.9))
    grid = fig.add_gridspec(1, 4, width_ratios=(2.6, 1, 1, 0.05))
    ax = fig.add_subplot(grid[0, 0])
    seed = int(timeseries["seed"].min())
    for policy in policies:
        part = timeseries[(timeseries["policy"] == policy) & (timeseries["seed"] == seed)]
        ax.step(part["time_h"], part["cost_usd_per_h"], where="post", lw=0.9,
                color=policy_colour(policy),
                label=f"{policy_label(policy)} "
                      f"(avg ${means.loc[policy, 'cost_usd_per_h']:,.0f}/h, "
                      f"peak {means.loc[policy, 'peak_gpus_total']:,.0f} GPUs)")
    ax.set_xlabel("time since the first arrival (h)")
    ax.set_ylabel("cost (USD/h)")
    ax.set_ylim(bottom=0)
    ax.set_title("(a) provisioning cost over time", loc="left")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False, fontsize=7,
               bbox_to_anchor=(0.5, 0.0))
    x = np.arange(len(policies))
    names = [policy_label(p) for p in policies]
    for col, (column, scale, ylabel, title) in enumerate((
            ("total_cost_over_optimal", 1.0, "total cost / optimal's", "(b) cost vs optimal"),
            ("slo_attainment_realised", 100.0, "SLO attainment, realised (%)",
             "(c) SLO attainment"))):
        bar_ax = fig.add_subplot(grid[0, 1 + col])
        values = [scale * means.loc[p, column] for p in policies]
        # whiskers: the 95% Student-t interval over seeds (rollmux.experiments.intervals)
        spans = [t_errorbar(scale * table.loc[table["policy"] == p, column].to_numpy(float))
                 for p in policies]
        err = whisker_lengths(values, spans)
        bars = bar_ax.bar(x, values, color=[policy_colour(p) for p in policies],
                          yerr=err if np.any(err > 1e-12) else None, capsize=2,
                          error_kw={"linewidth": 0.8})
        bar_ax.bar_label(bars, labels=[f"{v:.2f}" if scale == 1.0 else f"{v:.0f}"
                                       for v in values], fontsize=6)
        bar_ax.set_xticks(x, names, rotation=35, ha="right", rotation_mode="anchor")
        bar_ax.set_ylabel(ylabel)
        bar_ax.set_title(title, loc="left")
        if scale == 100.0:
            bar_ax.set_ylim(0, 110)
    jobs = int(table["jobs"].max()) if "jobs" in table else None
    fig.suptitle("Mixed workload, default setting" + (f" ({jobs} jobs)" if jobs else ""),
                 x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the tables, write PNG and PDF."""
    return figure_main(
        __doc__, {"table": "mixed.csv", "timeseries": "mixed_timeseries.csv"}, draw, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
