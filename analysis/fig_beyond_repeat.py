"""Beyond the paper: rollmux-repeat next to rollmux on the production and simulation traces.

Reads rule beyond_repeat's table (results/beyond/repeat.csv,
``rollmux.sim.policy_compare``: one row per replay) and draws four panels, one group of
bars per trace and one bar per policy: the cost of completing the trace, the SLO
attainment (``slo_attainment``, docs/metrics.md), the per-job slowdown (bar: mean over
completed jobs; triangle: 95th percentile; cross: maximum) and the decision latency (bar:
median CPU time per decision; line: up to the 95th percentile).

    python analysis/fig_beyond_repeat.py --table results/beyond/repeat.csv \
        --png figures/beyond_repeat.png --pdf figures/beyond_repeat.pdf
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rollmux.plotstyle import apply_style, figure_main, legend_below, policy_colour, policy_label

import matplotlib.pyplot as plt  # isort: skip  (after rollmux.plotstyle set the backend)


def _trace_label(trace: str) -> str:
    """``simulation-mixed-first60`` -> ``simulation-mixed\\n(first 60)``."""
    base, _, window = trace.partition("-first")
    return f"{base}\n(first {window} jobs)" if window else base


def draw(table: pd.DataFrame) -> plt.Figure:
    """Four panels: cost, SLO attainment, slowdown, decision latency per trace and policy."""
    apply_style()
    # a workload drawn again per seed (<name>-gen<s>-...) is its shipped trace's seed s
    table = table.assign(trace=table["trace"].astype(str).str.replace(r"-gen\d+", "",
                                                                       regex=True))
    means = table.groupby(["trace", "policy"], sort=False).mean(numeric_only=True)
    traces = list(dict.fromkeys(table["trace"]))
    policies = list(dict.fromkeys(table["policy"]))
    width = 0.8 / len(policies)
    x = np.arange(len(traces))
    fig, axes = plt.subplots(1, 4, figsize=(11.0, 3.2))
    for k, policy in enumerate(policies):
        colour = policy_colour(policy)
        rows = means.loc[[(t, policy) for t in traces]]
        at = x + (k - (len(policies) - 1) / 2) * width
        axes[0].bar(at, rows["total_cost_usd"] / 1e3, width, color=colour,
                    label=policy_label(policy))
        axes[1].bar(at, 100 * rows["slo_attainment"], width, color=colour)
        axes[2].bar(at, rows["mean_slowdown"], width, color=colour)
        axes[2].scatter(at, rows["p95_slowdown"], marker="^", color="black", s=14, zorder=3)
        axes[2].scatter(at, rows["max_slowdown"], marker="x", color="black", s=14, zorder=3)
        axes[3].bar(at, rows["decision_median_ms"], width, color=colour)
        axes[3].vlines(at, rows["decision_median_ms"], rows["decision_p95_ms"], color="black",
                       linewidth=1)
    titles = ("cost of the trace (kUSD)", "SLO attainment (%)",
              "per-job slowdown (x)", "decision latency (ms)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_title(title, loc="left")
        ax.set_xticks(x, [_trace_label(t) for t in traces], fontsize=7)
    axes[1].set_ylim(0, 105)
    axes[2].axhline(1.0, color="grey", linewidth=0.8)
    axes[3].set_yscale("log")
    legend_below(fig, *axes[0].get_legend_handles_labels(), ncol=len(policies))
    return fig


def main(argv: list[str] | None = None) -> int:
    """Read the comparison table, write PNG and PDF."""
    return figure_main(__doc__, {"table": "comparison CSV (results/beyond/repeat.csv)"}, draw,
                       argv, note=lambda table: f"{len(table)} replays")


if __name__ == "__main__":
    raise SystemExit(main())
